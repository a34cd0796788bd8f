/**
 * The examples of the published contract: answers the service gives, written as it writes them
 * (ids with every digit, through JSON.rawJSON), one Error record per code with the request that
 * provokes it. test/http/openapi-examples.test.ts sends each request and compares the answer.
 */
import { type ErrorCode, errorRecord, listTooLargeMessage, notCancellableMessage } from '../../shared/errors.ts';
import { stringIdsParameter } from '../../shared/order-json.ts';
import type { ErrorRecord, Order } from '../../shared/schemas.ts';

/** An integer written with every digit in the document (JSON.stringify keeps a raw JSON value as it is). */
const exact = (digits: string) => (JSON as unknown as { rawJSON: (text: string) => number }).rawJSON(digits);

/**
 * Orders of the examples, as the service holds them (ids as text): one above 2^53 − 1, where
 * JSON.parse rounds, and one next to int64's maximum, whose petId is above 2^53 − 1 too.
 */
export const exampleOrders: readonly Order[] = [
  { id: '9007199254740995', petId: '101', quantity: '1', shipDate: '2026-12-01T10:00:00Z', complete: false, status: 'pending' },
  {
    id: '9223372036854775806',
    petId: '9007199254740993',
    quantity: '2',
    shipDate: '2026-12-02T08:30:00Z',
    complete: true,
    status: 'shipped',
  },
];

/** An order as the service writes it (shared/order-json.ts), as a value whose integers keep every digit. */
const wireOrder = (order: Order, stringIds: boolean) => ({
  id: exact(order.id),
  ...(stringIds ? { idStr: order.id } : {}),
  ...(order.petId === undefined ? {} : { petId: exact(order.petId) }),
  ...(stringIds && order.petId !== undefined ? { petIdStr: order.petId } : {}),
  ...(order.quantity === undefined ? {} : { quantity: exact(order.quantity) }),
  ...(order.shipDate === undefined ? {} : { shipDate: order.shipDate }),
  ...(order.complete === undefined ? {} : { complete: order.complete }),
  ...(order.status === undefined ? {} : { status: order.status }),
});

/** The v1 list's examples: the default form and the one `stringIds=true` asks for. */
export const listExamples = {
  default: { summary: 'Orders (a store holds more); ids with every digit', value: exampleOrders.map((order) => wireOrder(order, false)) },
  [stringIdsParameter]: {
    summary: `With ${stringIdsParameter}=true: each id also as text`,
    value: exampleOrders.map((order) => wireOrder(order, true)),
  },
};

/**
 * A cursor as the service makes them: AES-256-GCM-sealed, base64url (functions/list-orders-paged/cursor.ts).
 * This one was sealed by the code with a random key for production, after the key `{id: 9223372036854775806}`:
 * its shape and length are a real cursor's, and it opens nowhere.
 */
export const cursorExample =
  'ARFKA19BKxRG2jQQHj-EHhR_3kDOS0EoiRWL3JWUZ5EWvqNW3kBpF0c13pkPSAy9BE1m3jMUwJ4NPJCcp0uZF_OAcK9WEfWUki_fYqGyfgtnW8Ix7eJizknanLev4Hlgi2Wx3wnLiESM_4WLH4HDf841t8HM0nf_g5LdyA8A2laUnA';

/** A v2 page of two orders, the first of a read: its orders and the next page's cursor. */
export const pageExample = {
  summary: `pageSize=2&${stringIdsParameter}=true: a full page and the cursor of the next`,
  value: { orders: exampleOrders.map((order) => wireOrder(order, true)), nextCursor: cursorExample },
};

/** The next-page Link of that page. */
export const linkExample = `<?pageSize=2&${stringIdsParameter}=true&cursor=${cursorExample}>; rel="next"`;

/** The `orderId` examples: ids a JavaScript number cannot hold, and the form the service reads leading zeros in. */
export const orderIdExamples = {
  aboveSafe: { summary: '2^53 + 1: a JavaScript number would send 9007199254740992, another order', value: '9007199254740993' },
  int64Max: { summary: "int64's maximum", value: '9223372036854775807' },
  negative: { summary: 'Negative ids are ids too', value: '-9007199254740993' },
};

/** An X-Request-Id as API Gateway and the local gateway make them (a UUID). */
export const requestIdExample = '5f0c6e0e-8a4b-4c2e-9d7a-3b1f2e4d6c8a';

type Example = { summary: string; value: ErrorRecord };
const example = (code: ErrorCode, summary: string, message?: string): Example => ({ summary, value: errorRecord(code, message) });

/** One Error record per code, as the service answers the request the summary names. */
export const errorExamples: Record<Exclude<ErrorCode, 'misdirected_request'>, Example> = {
  bad_request: example('bad_request', 'A request the gateway cannot read (here, two Host headers)'),
  invalid_query_parameter: example('invalid_query_parameter', `${stringIdsParameter}=yes`, `${stringIdsParameter} must be true or false.`),
  invalid_cursor: example('invalid_cursor', 'cursor=AAAA', 'cursor is not a cursor of this API: pass nextCursor unchanged.'),
  cursor_expired: example(
    'cursor_expired',
    'A cursor issued more than 24 hours ago',
    'cursor is older than 24 hours: start the read again without a cursor.',
  ),
  cursor_mismatch: example(
    'cursor_mismatch',
    'A cursor of a status=pending read, sent with status=shipped',
    'cursor was made for other status, shipDateFrom, shipDateTo, part or parts values: send the same ones.',
  ),
  invalid_order_id: example('invalid_order_id', 'DELETE /v1/store/orders/1e3'),
  unauthorized: example('unauthorized', 'No Authorization header, or a key the service does not know'),
  order_not_found: example('order_not_found', 'DELETE of an id no order has'),
  route_not_found: example('route_not_found', 'GET /v1/pets/1, or HEAD or OPTIONS on any path'),
  order_already_shipped: example('order_already_shipped', 'DELETE of a shipped order'),
  order_not_cancellable: example('order_not_cancellable', 'DELETE of an order whose status is "placed"', notCancellableMessage('placed')),
  list_too_large: example(
    'list_too_large',
    'A list of a store larger than one uncompressed answer carries, asked without Accept-Encoding: gzip',
    listTooLargeMessage(1_500_000, false, { plain: 1_406_250, gzip: 5_625_000 }),
  ),
  too_many_requests: example('too_many_requests', "Over the key's rate, burst or daily quota, or the stage's"),
  internal_error: example('internal_error', 'A fault the service did not expect'),
  service_unavailable: example('service_unavailable', 'DynamoDB unreachable or throttling after retries'),
  gateway_timeout: example('gateway_timeout', 'The function did not answer within API Gateway’s 29 s'),
};
