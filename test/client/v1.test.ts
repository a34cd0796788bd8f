/**
 * The client package (client/src) against the local service as `npm start` assembles it (real
 * handlers, authorizer, gateway, DynamoDB Local): exact ids both ways, each Error record as its
 * subclass, a 429 waited out, a daily quota not waited for, a store too large for one list.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BadRequestError,
  ListTooLargeError,
  ConflictError,
  NotFoundError,
  type Order,
  StoreOrdersClient,
  StoreOrdersError,
  TooManyRequestsError,
  UnauthorizedError,
} from '../../client/src/index.ts';
import type { LocalLimits } from '../../infra/local/rate-limits.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { localStage } from '../../infra/stage-config.ts';
import { type Tier } from '../../infra/tiers.ts';
import { readAll, recordingFetch } from '../lib/client.ts';
import { order, startTestApi } from '../lib/local-api.ts';

type Api = Awaited<ReturnType<typeof startTestApi>>;

// Neighbours that a rounded id would hit: 2^53 + 1 rounds to 2^53, int64's ends round past int64.
const big = ['9007199254740993', '9007199254740992', '9223372036854775807', '-9223372036854775808'];

describe('the client against the local service: ids', () => {
  let api: Api;
  let client: StoreOrdersClient;
  beforeAll(async () => {
    api = await startTestApi([
      order(big[0]!, 'pending', { petId: '9223372036854775806', quantity: '2', shipDate: '2026-01-02T03:04:05Z', complete: false }),
      order(big[1]!, 'pending'),
      order(big[2]!, 'pending'),
      order(big[3]!, 'shipped', { petId: '-9223372036854775807' }),
      order('2', 'shipped'),
      order('5', 'placed'),
    ]);
    client = new StoreOrdersClient({ baseUrl: api.url, apiKey: api.key });
  });
  afterAll(() => api.close());

  const storedStatus = async (id: string) =>
    (await api.orders.client.send(new GetCommand({ TableName: api.orders.tableName, Key: { id: BigInt(id) } }))).Item?.status as string;

  it('lists every order with its ids and petIds as exact bigints and the other fields as sent', async () => {
    const orders = await readAll(client.listOrders());
    expect(orders.map((o) => o.id).sort((a, b) => (a < b ? -1 : 1))).toEqual(
      [...big, '2', '5'].map(BigInt).sort((a, b) => (a < b ? -1 : 1)),
    );
    expect(orders.find((o) => o.id === 9007199254740993n)).toEqual({
      id: 9007199254740993n,
      petId: 9223372036854775806n,
      quantity: 2,
      shipDate: '2026-01-02T03:04:05Z',
      complete: false,
      status: 'pending',
    } satisfies Order);
    expect(orders.find((o) => o.id === -9223372036854775808n)?.petId).toBe(-9223372036854775807n);
  });

  it('cancels the order of an id above 2^53 and no neighbour', async () => {
    await expect(client.cancelOrder(9007199254740993n)).resolves.toBeUndefined();
    await expect(client.cancelOrder(9223372036854775807n)).resolves.toBeUndefined();
    expect(await storedStatus(big[0]!)).toBe('cancelled');
    expect(await storedStatus(big[2]!)).toBe('cancelled');
    expect(await storedStatus(big[1]!)).toBe('pending');
    // Cancelling again answers 204 again.
    await expect(client.cancelOrder(9007199254740993n)).resolves.toBeUndefined();
  });

  it('refuses an id given as a number, which may already have lost digits', async () => {
    await expect(client.cancelOrder(Number('9007199254740993') as unknown as bigint)).rejects.toThrow(TypeError);
  });

  it.each([
    [404n, NotFoundError, 404, 'order_not_found'],
    [2n, ConflictError, 409, 'order_already_shipped'],
    [5n, ConflictError, 409, 'order_not_cancellable'],
    [2n ** 63n, BadRequestError, 400, 'invalid_order_id'],
  ] as const)('turns the Error record of cancelling %s into %o (%i %s) with the request id', async (id, ErrorClass, status, code) => {
    const error = await client.cancelOrder(id).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error).toBeInstanceOf(StoreOrdersError);
    expect(error).toMatchObject({ code, status, attempts: 1, message: expect.any(String) });
    expect((error as StoreOrdersError).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers UnauthorizedError (401 unauthorized) for a key the service does not know, on both operations', async () => {
    const stranger = new StoreOrdersClient({ baseUrl: api.url, apiKey: 'so_test_not-a-real-key-000000' });
    await expect(readAll(stranger.listOrders())).rejects.toMatchObject({ name: 'UnauthorizedError', code: 'unauthorized', status: 401 });
    await expect(stranger.cancelOrder(1n)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('answers NotFoundError (404 route_not_found) for a base URL that is not the API', async () => {
    const lost = new StoreOrdersClient({ baseUrl: `${api.url}/nowhere/v1`, apiKey: api.key });
    await expect(lost.cancelOrder(1n)).rejects.toMatchObject({ name: 'NotFoundError', code: 'route_not_found', status: 404 });
  });
});

// One request a second, one at a time: the second request within a second is refused with Retry-After: 1.
const onePerSecond: Tier = {
  throttling: { rateLimit: 1, burstLimit: 1 },
  listThrottling: { rateLimit: 1, burstLimit: 1 },
  pagedListThrottling: { rateLimit: 1, burstLimit: 1 },
  dailyQuota: 1000,
  concurrentLists: 1,
};
const oneADay: Tier = { ...onePerSecond, throttling: { rateLimit: 100, burstLimit: 100 }, dailyQuota: 1 };
const limits: LocalLimits = { tiers: { ...localStage.tiers, onePerSecond, oneADay }, defaultTier: 'onePerSecond' };

describe('the client against the local service: 429', () => {
  let api: Api;
  const clientIn = async (tier: string) => {
    const { key } = await createApiKey(api.apiKeys, { name: tier, prefix: 'so_test_', tier });
    const recorder = recordingFetch();
    return { ...recorder, client: new StoreOrdersClient({ baseUrl: api.url, apiKey: key, fetch: recorder.fetch }) };
  };
  beforeAll(async () => {
    // The authorizer cache off: each request reads the key's record, its tier included.
    api = await startTestApi([order('1', 'pending')], { limits, stage: { ...localStage, authorizerCacheTtlSeconds: 0 } });
  });
  afterAll(() => api.close());

  it('waits out Retry-After on a 429 and then succeeds', async () => {
    const { client, statuses } = await clientIn('onePerSecond');
    await client.cancelOrder(1n);
    const started = Date.now();
    await client.cancelOrder(1n);
    // At least the one second Retry-After asked for, before the second attempt.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(statuses).toEqual([204, 429, 204]);
  });

  it('gives up at once with TooManyRequestsError when Retry-After lies beyond the deadline (a spent daily quota)', async () => {
    const { client, statuses } = await clientIn('oneADay');
    await client.cancelOrder(1n);
    // A deadline below any wait the quota can ask for (at least a second), whatever the time of day.
    const error = await client.cancelOrder(1n, { retry: { deadlineMs: 500 } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TooManyRequestsError);
    // Retry-After counts to the quota's reset at 00:00 UTC.
    expect(error).toMatchObject({ code: 'too_many_requests', status: 429, retryAfterSeconds: expect.any(Number), attempts: 1 });
    expect((error as TooManyRequestsError).retryAfterSeconds).toBeLessThanOrEqual(86_400);
    expect(statuses).toEqual([204, 429]);
  });

  it('with retries off (maxAttempts: 1) reports the first 429', async () => {
    const { client, statuses } = await clientIn('onePerSecond');
    await client.cancelOrder(1n);
    const error = await client.cancelOrder(1n, { retry: { maxAttempts: 1 } }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'too_many_requests', attempts: 1, retryAfterSeconds: 1 });
    expect(statuses).toEqual([204, 429]);
  });
});

describe('the client against the local service: a store larger than one list can carry', () => {
  let api: Api;
  beforeAll(async () => {
    // The limits lowered, as test/http/list-size.test.ts does: deployed, about 1.4 million orders (5.6 with gzip).
    api = await startTestApi(
      ['1', '2', '3'].map((id) => order(id, 'pending')),
      { environment: { LIST_MAX_ORDERS: '2', LIST_MAX_ORDERS_GZIP: '2' } },
    );
  });
  afterAll(() => api.close());

  it('throws ListTooLargeError (406 list_too_large) before any order, naming v2', async () => {
    const client = new StoreOrdersClient({ baseUrl: api.url, apiKey: api.key });
    const error = await readAll(client.listOrders()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ListTooLargeError);
    expect(error).toMatchObject({ code: 'list_too_large', status: 406, attempts: 1, message: expect.stringContaining('/v2') });
  });
});
