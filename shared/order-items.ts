import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { isProbeOrderId } from './probes.ts';
import { type InvalidItemReport, type Order, storedOrderSchema } from './schemas.ts';

const orderAttributes = ['id', 'petId', 'quantity', 'shipDate', 'complete', 'status'];

/** What every Scan and Query of the orders table reads: only what an Order carries, less to read, transfer and parse. */
export const orderProjection = {
  ProjectionExpression: orderAttributes.map((_, i) => `#a${i}`).join(','),
  ExpressionAttributeNames: Object.fromEntries(orderAttributes.map((name, i) => [`#a${i}`, name])),
};

/**
 * Turns a stored item into an Order. Fields that break the table contract are left out (and
 * reported) rather than failing the whole list; an item whose id is not an int64 is skipped. A
 * probe's own order (an id of the range shared/probes.ts reserves) is no client's: never listed.
 */
const toOrder = (item: Record<string, unknown>, onInvalid?: (report: InvalidItemReport) => void): Order | undefined => {
  const id = item.id instanceof NumberValue ? item.id.value : item.id;
  if (typeof id === 'string' && isProbeOrderId(id)) return undefined;
  const parsed = storedOrderSchema.safeParse(item);
  if (parsed.success) return parsed.data;
  const fields = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0])))];
  if (fields.includes('id')) {
    onInvalid?.({ id, fields, dropped: 'item' });
    return undefined;
  }
  onInvalid?.({ id, fields, dropped: 'fields' });
  const kept = Object.fromEntries(Object.entries(item).filter(([key]) => !fields.includes(key)));
  return storedOrderSchema.parse(kept);
};

/** The Orders of one Scan or Query page's items (see toOrder: what is left out, and what reported). */
export const toOrders = (
  items: readonly Record<string, unknown>[] | undefined,
  onInvalid?: (report: InvalidItemReport) => void,
): Order[] => {
  const orders: Order[] = [];
  for (const item of items ?? []) {
    const order = toOrder(item, onInvalid);
    if (order !== undefined) orders.push(order);
  }
  return orders;
};
