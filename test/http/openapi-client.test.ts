import createClient, { type Client } from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as generated from '../../client/src/generated/openapi.ts';
import { order, startTestApi } from '../lib/local-api.ts';
import { contractCheckedFetch, parseJsonExact } from '../lib/openapi-contract.ts';

/**
 * The types `npm run openapi` generates (client/src/generated/openapi.ts, every int64 `bigint`),
 * with each int64 widened to `number | bigint`: what a client holds whose parser makes only the ids
 * above 2^53 − 1 bigint (and what its naive form, which reads every id as a number, sends).
 */
type Int64AsNumberToo<T> = T extends bigint ? number | bigint : T extends object ? { [K in keyof T]: Int64AsNumberToo<T[K]> } : T;
type paths = Int64AsNumberToo<generated.paths>;
type Order = Int64AsNumberToo<generated.components['schemas']['Order']>;
type CancelOrderErrorCode =
  | 'bad_request'
  | 'invalid_order_id'
  | 'unauthorized'
  | 'order_not_found'
  | 'route_not_found'
  | 'order_already_shipped'
  | 'order_not_cancellable'
  | 'too_many_requests'
  | 'internal_error'
  | 'service_unavailable'
  | 'gateway_timeout';

const int64Max = '9223372036854775807';
const twoTo53 = '9007199254740992';
const twoTo53Plus1 = '9007199254740993';

/**
 * The typed client of docs/api.md#a-typescript-client, end to end against the local service: types generated
 * from docs/openapi.json (client/src/generated/openapi.ts, widened above), calls made with openapi-fetch, and
 * every response also checked against the document.
 */
describe('a TypeScript client generated from the document', () => {
  let api: Awaited<ReturnType<typeof startTestApi>>;
  let client: Client<paths>;
  const listExactly = async () => {
    const { data, response } = await client.GET('/v1/store/orders', { parseAs: 'text' });
    expect(response.status).toBe(200);
    return parseJsonExact<Order[]>(data!);
  };
  const statusOf = (orders: Order[], id: bigint | number) => orders.find((entry) => entry.id === id)?.status;

  beforeAll(async () => {
    api = await startTestApi([
      order(int64Max, 'pending', { petId: twoTo53Plus1, quantity: '2' }),
      order(twoTo53Plus1, 'pending'),
      order(twoTo53, 'pending'),
      order('7', 'shipped'),
    ]);
    client = createClient<paths>({ baseUrl: api.url.replace(/\/v1$/, ''), headers: api.auth, fetch: contractCheckedFetch() });
  });
  afterAll(() => api?.close());

  it('loses digits on the default path: JSON.parse rounds ids above 2^53 − 1', async () => {
    const { data } = await client.GET('/v1/store/orders');
    const ids = data!.map((entry) => String(entry.id)).sort();
    // int64 max comes back as 2^63, and 2^53 + 1 can no longer be told from 2^53.
    expect(ids).toEqual(['7', '9007199254740992', '9007199254740992', '9223372036854776000']);
    expect(ids).not.toContain(int64Max);
  });

  it('keeps every digit with parseAs: "text" and a reviver that reads context.source', async () => {
    const orders = await listExactly();
    expect(orders.map((entry) => entry.id)).toEqual(
      expect.arrayContaining([9223372036854775807n, 9007199254740993n, 9007199254740992n, 7]),
    );
    expect(orders.find((entry) => entry.id === 9223372036854775807n)).toEqual({
      id: 9223372036854775807n,
      petId: 9007199254740993n,
      quantity: 2,
      status: 'pending',
    });
  });

  it('cancels by an exact id, where the rounded id cancels the wrong order or none', async () => {
    // Naive: the id read as a number is 2^53, so the cancel hits the neighbouring order.
    const naive = await client.DELETE('/v1/store/orders/{orderId}', { params: { path: { orderId: String(Number(twoTo53Plus1)) } } });
    expect(naive.response.status).toBe(204);
    let orders = await listExactly();
    expect(statusOf(orders, 9007199254740992n)).toBe('cancelled');
    expect(statusOf(orders, 9007199254740993n)).toBe('pending');

    // Naive: int64 max read as a number is 2^63, which is no int64 at all.
    const rounded = await client.DELETE('/v1/store/orders/{orderId}', { params: { path: { orderId: String(Number(int64Max)) } } });
    expect(rounded.response.status).toBe(400);
    expect(rounded.error?.code).toBe('invalid_order_id');

    // Exact: the path parameter is text (the document says so), the id's digits as read.
    const exact = await client.DELETE('/v1/store/orders/{orderId}', { params: { path: { orderId: String(9223372036854775807n) } } });
    expect(exact.response.status).toBe(204);
    orders = await listExactly();
    expect(statusOf(orders, 9223372036854775807n)).toBe('cancelled');
  });

  it('types error records with the codes the document lists', async () => {
    const { error, response } = await client.DELETE('/v1/store/orders/{orderId}', { params: { path: { orderId: '7' } } });
    expect(response.status).toBe(409);
    // Compiles only because the generated types narrow `code` to the documented values.
    const code: CancelOrderErrorCode | undefined = error?.code;
    expect(code).toBe('order_already_shipped');
    expect(error).toEqual({ code: 'order_already_shipped', message: expect.any(String), status: 409 });
  });
});
