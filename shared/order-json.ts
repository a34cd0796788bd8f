import type { Order } from './schemas.ts';

/**
 * One Order as JSON. Numbers are written from their exact decimal text (validated as
 * integers when read), so int64 ids keep every digit; strings go through JSON.stringify.
 * With `stringIds`, `idStr` and `petIdStr` follow `id` and `petId`: the same digits as JSON
 * strings, for clients whose JSON parser rounds integers above 2^53 − 1 (int64 text needs no
 * escaping). Hand-written because it runs once per order on the list's hot path.
 */
export const orderToJson = (order: Order, stringIds = false): string => {
  let json = stringIds ? `{"id":${order.id},"idStr":"${order.id}"` : `{"id":${order.id}`;
  if (order.petId !== undefined) json += stringIds ? `,"petId":${order.petId},"petIdStr":"${order.petId}"` : `,"petId":${order.petId}`;
  if (order.quantity !== undefined) json += `,"quantity":${order.quantity}`;
  if (order.shipDate !== undefined) json += `,"shipDate":${JSON.stringify(order.shipDate)}`;
  if (order.complete !== undefined) json += `,"complete":${order.complete}`;
  if (order.status !== undefined) json += `,"status":${JSON.stringify(order.status)}`;
  return `${json}}`;
};

/** The query parameter that asks for `idStr` and `petIdStr` (v1 list and v2 pages alike). */
export const stringIdsParameter = 'stringIds';
