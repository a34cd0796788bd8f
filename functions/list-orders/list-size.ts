/**
 * How many orders one v1 list answer may carry. The stage sets the counts for the default form
 * (LIST_MAX_ORDERS, LIST_MAX_ORDERS_GZIP, from ./contract.ts); a list asked for with
 * `stringIds=true` writes more bytes per order, so it carries proportionally fewer. Here, not
 * in the contract, so that the function and the published description use the same figures.
 */

/**
 * Bytes per order in the list's JSON, with headroom over what `npm run bench` measures: about
 * 104–109 plain and 9–25 gzip-compressed in the default form; with `stringIds=true`, 143 plain
 * and 15 compressed for short ids, 201 and 17 when every id and petId has 19 digits
 * (docs/api.md#limits-of-the-deployed-list).
 */
export const listBytesPerOrder = {
  default: { plain: 128, gzip: 32 },
  stringIds: { plain: 224, gzip: 40 },
} as const;

/** The most orders one answer carries in a form, from the stage's counts for the default form. */
export const listMaxOrdersOf = (limits: { plain: number; gzip: number }, stringIds: boolean): { plain: number; gzip: number } => {
  if (!stringIds) return limits;
  const scaled = (key: 'plain' | 'gzip') =>
    Math.max(1, Math.floor((limits[key] * listBytesPerOrder.default[key]) / listBytesPerOrder.stringIds[key]));
  return { plain: scaled('plain'), gzip: scaled('gzip') };
};
