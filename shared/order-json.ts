import type { Order } from './schemas.ts';

/**
 * One Order as JSON. Numbers are written from their exact decimal text (validated as
 * integers when read), so int64 ids keep every digit; strings go through JSON.stringify.
 * Hand-written because it runs once per order on the list's hot path.
 */
export const orderToJson = (order: Order): string => {
  let json = `{"id":${order.id}`;
  if (order.petId !== undefined) json += `,"petId":${order.petId}`;
  if (order.quantity !== undefined) json += `,"quantity":${order.quantity}`;
  if (order.shipDate !== undefined) json += `,"shipDate":${JSON.stringify(order.shipDate)}`;
  if (order.complete !== undefined) json += `,"complete":${order.complete}`;
  if (order.status !== undefined) json += `,"status":${JSON.stringify(order.status)}`;
  return `${json}}`;
};
