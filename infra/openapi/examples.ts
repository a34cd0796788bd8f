/**
 * The examples of the published contract: answers the service gives, written as it writes them
 * (ids with every digit, through JSON.rawJSON), one Error record per code with the request that
 * provokes it. test/http/openapi-examples.test.ts sends each request and compares the answer.
 */
import { type ErrorCode, errorRecord, listTooLargeMessage, notCancellableMessage } from '../../shared/errors.ts';
import { stringIdsParameter } from '../../shared/order-json.ts';
import type { ErrorRecord } from '../../shared/schemas.ts';

/** An integer written with every digit in the document (JSON.stringify keeps a raw JSON value as it is). */
const exact = (digits: string) => (JSON as unknown as { rawJSON: (text: string) => number }).rawJSON(digits);

/** Orders of the examples: one above 2^53 − 1 (where JSON.parse rounds), one at int64's maximum. */
const exampleOrders = [
  { id: '9007199254740993', petId: '101', quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false, status: 'pending' },
  {
    id: '9223372036854775807',
    petId: '9007199254740993',
    quantity: 2,
    shipDate: '2026-12-02T08:30:00Z',
    complete: true,
    status: 'shipped',
  },
] as const;

type ExampleOrder = (typeof exampleOrders)[number];
const wireOrder = (order: ExampleOrder, stringIds: boolean) => ({
  id: exact(order.id),
  ...(stringIds ? { idStr: order.id } : {}),
  petId: exact(order.petId),
  ...(stringIds ? { petIdStr: order.petId } : {}),
  quantity: order.quantity,
  shipDate: order.shipDate,
  complete: order.complete,
  status: order.status,
});

/** The example orders as a SEED_FILE entry (int64 fields as text, as the seed file takes them). */
export const exampleSeedOrders = exampleOrders.map((order) => ({ ...order, quantity: String(order.quantity) }));

/** The Order schema's example. */
export const orderExample = wireOrder(exampleOrders[0], false);

/** The v1 list's examples: the default form and the one `stringIds=true` asks for. */
export const listExamples = {
  default: { summary: 'Orders (a store holds more); ids with every digit', value: exampleOrders.map((order) => wireOrder(order, false)) },
  [stringIdsParameter]: {
    summary: `With ${stringIdsParameter}=true: each id also as text`,
    value: exampleOrders.map((order) => wireOrder(order, true)),
  },
};

/**
 * A cursor as the service makes them: base64url, 55 to 143 characters for the keys of this
 * table (this one is 63, a page read from the start of an unfiltered Scan); opaque, sealed with
 * the stage's key, so this one opens nowhere.
 */
export const cursorExample = 'AdWZdWgJ4LRqpafr7SnBbFMVjtRxlm3vumjnvahiivIh0rOC1Nci2n9xZPMgCm1fQgtw';

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
