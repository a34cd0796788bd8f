/**
 * The v2 list's query parameters (docs/api.md#v2-list-orders-in-pages), read and checked once: the
 * page size, filters and part a page is read with, the binding its cursors carry, the parameters the
 * next page's link repeats, and which of a page's orders match. Every malformed value is a 400
 * `invalid_query_parameter` whose message names the parameter.
 */
import { apiError } from '../../shared/errors.ts';
import { bindingHash, cursorMaxLength } from './cursor.ts';
import { stringIdsParameter } from '../../shared/order-json.ts';
import { type Order, orderStatus } from '../../shared/schemas.ts';

export const pageSizeBounds = { min: 1, max: 1000, default: 100 } as const;
export const partsBounds = { min: 1, max: 16 } as const;
export const listStatuses = [orderStatus.pending, orderStatus.shipped, orderStatus.cancelled] as const;
export type ListStatus = (typeof listStatuses)[number];

export type ListQuery = {
  readonly pageSize: number;
  readonly status?: ListStatus;
  /** Bounds as nanoseconds since the epoch, exact (RFC 3339 allows any fraction of a second). */
  readonly shipDateFrom?: bigint;
  readonly shipDateTo?: bigint;
  readonly split?: { readonly part: number; readonly parts: number };
  readonly cursor?: string;
  /** What a cursor is bound to (queryBinding): the request's cursor is opened, and the next one sealed, with it. */
  readonly binding: string;
  /** The parameters the next page's link repeats, as sent (linkedParameters). */
  readonly linked: readonly [string, string][];
  /** `stringIds=true`: each order also carries `idStr` and `petIdStr` (not part of the binding). */
  readonly stringIds: boolean;
};

/** The parameters a cursor is bound to, pageSize and stringIds: what the Link to the next page repeats. */
const linkedParameters = ['pageSize', 'status', 'shipDateFrom', 'shipDateTo', 'part', 'parts', stringIdsParameter] as const;

const invalid = (name: string, rule: string) => apiError('invalid_query_parameter', `${name} ${rule}.`);

const integerIn = (name: string, raw: string, min: number, max: number): number => {
  const rule = `must be an integer from ${min} to ${max}`;
  if (!/^[0-9]{1,6}$/.test(raw)) throw invalid(name, rule);
  const value = Number(raw);
  if (value < min || value > max) throw invalid(name, rule);
  return value;
};

const rfc3339 = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 date-time as exact nanoseconds since the epoch, or undefined when it is none. */
export const instantOf = (text: string): bigint | undefined => {
  const match = rfc3339.exec(text);
  if (match === null) return undefined;
  const [, date, time, fraction = '', offset] = match as unknown as [string, string, string, string | undefined, string];
  const [hours, minutes, seconds] = time.split(':').map(Number) as [number, number, number];
  // Date.parse rolls 24:00 or Feb 30 over silently: refuse what RFC 3339 refuses (leap seconds aside).
  if (hours > 23 || minutes > 59 || seconds > 59) return undefined;
  const dayMs = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(dayMs) || new Date(dayMs).toISOString().slice(0, 10) !== date) return undefined;
  const ms = Date.parse(`${date}T${time}${offset.toUpperCase()}`);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt(fraction.padEnd(9, '0'));
};

/**
 * `stringIds`: absent or `false` is the default form; any other value but `true` is a 400, so a
 * misspelt value is never silently an answer without the text ids (the v1 list ignores it instead).
 */
const stringIdsOf = (raw: string | undefined): boolean => {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  throw invalid(stringIdsParameter, 'must be true or false');
};

const shipDateBound = (name: string, raw: string): bigint => {
  const instant = raw.length <= 64 ? instantOf(raw) : undefined;
  if (instant === undefined) throw invalid(name, 'must be an RFC 3339 date-time with an offset, e.g. 2026-12-01T00:00:00Z');
  return instant;
};

/** The request's query parameters read as a ListQuery; unknown parameters are ignored. */
export const parseListQuery = (parameters: Readonly<Record<string, string | undefined>> | null | undefined): ListQuery => {
  const p = parameters ?? {};
  const pageSize =
    p.pageSize === undefined ? pageSizeBounds.default : integerIn('pageSize', p.pageSize, pageSizeBounds.min, pageSizeBounds.max);
  let status: ListStatus | undefined;
  if (p.status !== undefined) {
    if (!(listStatuses as readonly string[]).includes(p.status)) throw invalid('status', `must be one of ${listStatuses.join(', ')}`);
    status = p.status as ListStatus;
  }
  if ((p.part === undefined) !== (p.parts === undefined))
    throw invalid(p.part === undefined ? 'part' : 'parts', 'must be sent with part and parts both, or neither');
  let split: ListQuery['split'];
  if (p.parts !== undefined && p.part !== undefined) {
    const parts = integerIn('parts', p.parts, partsBounds.min, partsBounds.max);
    split = { parts, part: integerIn('part', p.part, 1, parts) };
  }
  const shipDateFrom = p.shipDateFrom === undefined ? undefined : shipDateBound('shipDateFrom', p.shipDateFrom);
  const shipDateTo = p.shipDateTo === undefined ? undefined : shipDateBound('shipDateTo', p.shipDateTo);
  // The range is half-open (from ≤ shipDate < to): with to at or before from no order can match,
  // and the read would cross the whole table to answer nothing.
  if (shipDateFrom !== undefined && shipDateTo !== undefined && shipDateTo <= shipDateFrom)
    throw invalid('shipDateTo', 'must be later than shipDateFrom (the range is shipDateFrom ≤ shipDate < shipDateTo)');
  if (p.cursor !== undefined && (p.cursor.length === 0 || p.cursor.length > cursorMaxLength)) throw apiError('invalid_cursor');
  const filters = {
    pageSize,
    ...(status === undefined ? {} : { status }),
    ...(shipDateFrom === undefined ? {} : { shipDateFrom }),
    ...(shipDateTo === undefined ? {} : { shipDateTo }),
    ...(split === undefined ? {} : { split }),
    ...(p.cursor === undefined ? {} : { cursor: p.cursor }),
  };
  const linked = linkedParameters.flatMap((name): [string, string][] => {
    const value = p[name];
    return value === undefined ? [] : [[name, value]];
  });
  return { ...filters, binding: queryBinding(filters), linked, stringIds: stringIdsOf(p[stringIdsParameter]) };
};

/** What a cursor is bound to: the filters and the part, as values (two spellings of one instant are one binding). */
const queryBinding = (query: Omit<ListQuery, 'binding' | 'linked' | 'stringIds'>): string =>
  bindingHash({
    status: query.status,
    shipDateFrom: query.shipDateFrom?.toString(),
    shipDateTo: query.shipDateTo?.toString(),
    part: query.split?.part,
    parts: query.split?.parts,
  });

/** True when an order passes the query's filters (the status index already holds only one status). */
export const matches = (query: ListQuery, order: Order): boolean => {
  if (query.status !== undefined && order.status !== query.status) return false;
  if (query.shipDateFrom === undefined && query.shipDateTo === undefined) return true;
  const shipDate = order.shipDate === undefined ? undefined : instantOf(order.shipDate);
  if (shipDate === undefined) return false;
  if (query.shipDateFrom !== undefined && shipDate < query.shipDateFrom) return false;
  return query.shipDateTo === undefined || shipDate < query.shipDateTo;
};
