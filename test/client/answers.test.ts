/**
 * Only the service's answers count: the client follows no redirect (for any operation: a
 * redirect is a `RedirectError` naming where it pointed, and nothing is sent there), both list
 * parsers accept exactly the documented id form (a JSON integer within int64) and refuse every
 * other with one error class, and a v1 list that stalls is closed within its idle bound (30 s by
 * default). Against small HTTP servers in the test: a service, and a server elsewhere.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Order, StoreOrdersClient, clientDefaults } from '../../client/src/index.ts';
import { json, readAll, testServer } from '../lib/client.ts';

let service: Awaited<ReturnType<typeof testServer>>;
let elsewhere: Awaited<ReturnType<typeof testServer>>;
beforeAll(async () => {
  service = await testServer();
  elsewhere = await testServer();
});
afterAll(() => {
  service.close();
  elsewhere.close();
});
beforeEach(() => {
  service.seen.length = 0;
  elsewhere.seen.length = 0;
  elsewhere.handler = (_request, response) => response.writeHead(204).end();
});

const key = 'key-0123456789abcdef';
const client = (options: Partial<ConstructorParameters<typeof StoreOrdersClient>[0]> = {}) =>
  new StoreOrdersClient({ baseUrl: service.baseUrl, apiKey: key, retry: { backoffMs: 10 }, ...options });
const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );

describe('redirects: none is followed, for any operation', () => {
  const redirect = (status: number, location: string) => (_request: unknown, response: ServerResponse) =>
    response.writeHead(status, { Location: location, 'X-Request-Id': 'req-redirect' }).end();

  it.each([301, 302, 303, 307, 308])(
    'cancelOrder answered %i to another origin: RedirectError naming it, nothing sent there',
    async (status) => {
      service.handler = redirect(status, `${elsewhere.origin}/v1/store/orders/7`);
      const error = await caught(client().cancelOrder(7n));
      expect(error).toMatchObject({
        name: 'RedirectError',
        code: 'client_redirect',
        status,
        location: `${elsewhere.origin}/v1/store/orders/7`,
      });
      expect((error as Error).message).toContain(`${elsewhere.origin}/v1/store/orders/7`);
      expect(elsewhere.seen).toEqual([]);
      // Not retried: one request, one answer.
      expect(service.seen).toHaveLength(1);
      expect(error).toMatchObject({ attempts: 1, requestId: 'req-redirect' });
    },
  );

  it('a same-origin 307 does not move the DELETE (and the key) to another order', async () => {
    service.handler = (request, response, url) =>
      url.pathname === '/v1/store/orders/1' ? redirect(307, '/v1/store/orders/2')(request, response) : response.writeHead(204).end();
    const error = await caught(client().cancelOrder(1n));
    expect(error).toMatchObject({ name: 'RedirectError', status: 307, location: `${service.origin}/v1/store/orders/2` });
    expect(service.seen.map(({ method, url }) => `${method} ${url.pathname}`)).toEqual(['DELETE /v1/store/orders/1']);
  });

  it('listOrders and listOrderPages refuse a redirect as well', async () => {
    service.handler = redirect(302, `${elsewhere.origin}/list`);
    elsewhere.handler = (_request, response) => json(response, 200, '[]');
    await expect(readAll(client().listOrders())).rejects.toMatchObject({ name: 'RedirectError', location: `${elsewhere.origin}/list` });
    await expect(readAll(client().listOrderPages())).rejects.toMatchObject({ name: 'RedirectError', location: `${elsewhere.origin}/list` });
    expect(elsewhere.seen).toEqual([]);
  });

  it('refuses an answer that a fetch of the caller`s own reached by following a redirect', async () => {
    service.handler = redirect(307, `${elsewhere.origin}/v1/store/orders/7`);
    const following: typeof fetch = (input, init) => fetch(input, { ...init, redirect: 'follow' });
    const error = await caught(client({ fetch: following }).cancelOrder(7n));
    expect(error).toMatchObject({ name: 'RedirectError', location: `${elsewhere.origin}/v1/store/orders/7` });
  });
});

describe('ids: exactly a JSON integer within int64, in the v1 list and in v2 pages alike', () => {
  const v1 = () => readAll(client().listOrders());
  const v2 = () => readAll(client().listOrderPages()).then((pages) => pages.flatMap((page) => page.orders));
  const serve = (orders: string) => {
    service.handler = (_request, response, url) => json(response, 200, url.pathname.startsWith('/v2/') ? `{"orders":${orders}}` : orders);
  };

  const refused = [
    ['a string id', '[{"id":"9007199254740993"}]'],
    ['a string made to look like the v1 parser`s own mark', '[{"id":"~9007199254740993"}]'],
    ['null', '[{"id":null}]'],
    ['a fraction', '[{"id":1.5}]'],
    ['a whole number written as a fraction', '[{"id":1.0}]'],
    ['an exponent', '[{"id":1e3}]'],
    ['a number past int64', '[{"id":9223372036854775808}]'],
    ['a number below int64', '[{"id":-9223372036854775809}]'],
    ['a petId as a string', '[{"id":1,"petId":"2"}]'],
    ['a petId past int64', '[{"id":1,"petId":99999999999999999999}]'],
    ['a key spelled with an escape, holding a string', '[{"\\u0069d":"5"}]'],
    ['a duplicate key whose last value is a fraction', '[{"id":1,"id":1.0}]'],
    ['a second order with a bad id', '[{"id":1},{"id":"2"}]'],
  ] as const;

  it.each(refused)('refuses %s with InvalidResponseError in both parsers', async (_what, orders) => {
    serve(orders);
    for (const read of [v1, v2]) {
      const error = await caught(read());
      expect(error).toMatchObject({ name: 'InvalidResponseError', code: 'client_invalid_response', status: 200 });
      expect((error as Error).message).toMatch(/must be a JSON integer within int64/);
    }
  });

  it('accepts both ends of int64, zero, spaces around the colon, and an escaped key holding an integer', async () => {
    const orders = '[{"id":-9223372036854775808,"petId":9223372036854775807},{"id" : 0 },{"\\u0069d":9007199254740993}]';
    serve(orders);
    const expected: Order[] = [{ id: -9223372036854775808n, petId: 9223372036854775807n }, { id: 0n }, { id: 9007199254740993n }];
    expect(await v1()).toEqual(expected);
    expect(await v2()).toEqual(expected);
  });
});

describe('a v1 list that stalls', () => {
  const stallAfterOne = () => {
    service.handler = (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json', 'X-Request-Id': 'req-stall' });
      response.write('[{"id":9007199254740993},');
    };
  };

  it('is closed after idleTimeoutMs with nothing sent: ResponseStalledError after the orders that arrived', async () => {
    stallAfterOne();
    const orders: Order[] = [];
    const error = await caught(
      (async () => {
        for await (const order of client({ idleTimeoutMs: 200 }).listOrders()) orders.push(order);
      })(),
    );
    expect(orders).toEqual([{ id: 9007199254740993n }]);
    expect(error).toMatchObject({
      name: 'ResponseStalledError',
      code: 'client_response_stalled',
      ordersRead: 1,
      idleTimeoutMs: 200,
      requestId: 'req-stall',
    });
  });

  it('is bounded by default: 30 s with nothing sent, changeable per call', async () => {
    expect(clientDefaults.idleTimeoutMs).toBe(30_000);
    stallAfterOne();
    // Only the client's own timers are faked; the socket stays real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const list = client().listOrders();
      expect((await list.next()).value).toEqual({ id: 9007199254740993n });
      const next = caught(list.next());
      await vi.advanceTimersByTimeAsync(clientDefaults.idleTimeoutMs - 1);
      expect(await Promise.race([next, Promise.resolve('pending')])).toBe('pending');
      await vi.advanceTimersByTimeAsync(1);
      expect(await next).toMatchObject({ name: 'ResponseStalledError', idleTimeoutMs: 30_000 });
    } finally {
      vi.useRealTimers();
    }
    stallAfterOne();
    await expect(readAll(client().listOrders({ idleTimeoutMs: 100 }))).rejects.toMatchObject({ idleTimeoutMs: 100 });
  });

  it('does not count the time the caller spends on an order', async () => {
    service.handler = (_request, response) => json(response, 200, '[{"id":1},{"id":2}]');
    const orders: bigint[] = [];
    for await (const order of client({ idleTimeoutMs: 50 }).listOrders()) {
      orders.push(order.id);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(orders).toEqual([1n, 2n]);
  });
});
