/**
 * The client (client/src) survives any server: against real HTTP servers on 127.0.0.1 that
 * misbehave on purpose (test/lib/hostile-servers.ts), each call ends with a typed error within
 * its bounds: a page or an order past its size (gzip bombs, bodies that never end), a server that
 * never answers, an error body dripped, a repeated cursor, a read past its page cap. No error
 * holds the key, whatever the server echoes; `Retry-After` is read as RFC 9110 says; timeouts and
 * aborts are `StoreOrdersError`s; every request names the client. The packed package meets the
 * same servers in test/client/package.test.ts, where its memory is measured.
 */
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  AbortError,
  ConnectionError,
  InternalServerError,
  InvalidResponseError,
  PageLimitError,
  ResponseTooLargeError,
  ServiceUnavailableError,
  StoreOrdersClient,
  StoreOrdersError,
  TimeoutError,
  clientDefaults,
  clientUserAgent,
  clientVersion,
  type StoreOrdersClientOptions,
} from '../../client/src/index.ts';
import { retryAfterSeconds } from '../../client/src/failures.ts';
import { keyScrubber } from '../../client/src/scrub.ts';
import { json, readAll, testServer } from '../lib/client.ts';
import { type HostileKind, hostileServer } from '../lib/hostile-servers.ts';

const key = 'so_test_hostile-Zq8Xv3Lm0Pr7Wt2Yb5Nc';
let hostile: Awaited<ReturnType<typeof hostileServer>>;
beforeAll(async () => {
  hostile = await hostileServer();
});
afterAll(() => hostile.close());
beforeEach(() => {
  hostile.seen.length = 0;
});

const client = (kind: HostileKind, options: Partial<StoreOrdersClientOptions> = {}) =>
  new StoreOrdersClient({ baseUrl: hostile.baseUrl(kind), apiKey: key, retry: { backoffMs: 10 }, ...options });
const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );
const closedEarly = () => Promise.all(hostile.seen.map((request) => request.closedEarly));

describe('bounds on size, counted after decompression', () => {
  it('refuses a ~1 MB gzip v2 page that expands to 1 GiB at maxPageBytes (16 MiB by default), closing the connection, not retried', async () => {
    const error = await caught(client('v2-gzip-bomb').collectOrders({ limit: 10 }));
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error).toMatchObject({ code: 'client_response_too_large', status: 200, limitBytes: 16 * 1024 * 1024, attempts: 1 });
    expect(clientDefaults.maxPageBytes).toBe(16 * 1024 * 1024);
    expect(await closedEarly()).toEqual([true]);
  });

  it('refuses a v2 page that never ends at the maxPageBytes it was given', async () => {
    const error = await caught(readAll(client('v2-endless', { maxPageBytes: 1_000_000 }).listOrderPages()));
    expect(error).toMatchObject({ name: 'ResponseTooLargeError', limitBytes: 1_000_000 });
    expect(await closedEarly()).toEqual([true]);
  });

  it.each(['v1-endless-order', 'v1-gzip-bomb'] as const)(
    'refuses %s at maxOrderBytes (16 KiB by default), after the orders before it',
    async (kind) => {
      const orders: bigint[] = [];
      const error = await caught(
        (async () => {
          for await (const order of client(kind).listOrders()) orders.push(order.id);
        })(),
      );
      expect(orders).toEqual([1n]);
      expect(error).toBeInstanceOf(ResponseTooLargeError);
      expect(error).toMatchObject({ code: 'client_response_too_large', limitBytes: 16 * 1024, ordersRead: 1, requestId: 'req-hostile' });
      expect(clientDefaults.maxOrderBytes).toBe(16 * 1024);
      expect(await closedEarly()).toEqual([true]);
    },
  );

  it('accepts an order or a page of exactly the bound, and refuses one byte more (UTF-8 bytes, not characters)', async () => {
    const server = await testServer();
    try {
      const order = `{"id":1,"status":"${'é'.repeat(20)}"}`; // 20 é of 2 bytes each: 60 bytes in 40 characters
      const bytes = new TextEncoder().encode(order).length;
      server.handler = (_request, response, url) =>
        json(response, 200, url.pathname.startsWith('/v2/') ? `{"orders":[${order}]}` : `[${order}]`);
      const at = (options: Partial<StoreOrdersClientOptions>) =>
        new StoreOrdersClient({ baseUrl: server.baseUrl, apiKey: key, ...options });
      expect(await readAll(at({ maxOrderBytes: bytes }).listOrders())).toHaveLength(1);
      await expect(readAll(at({ maxOrderBytes: bytes - 1 }).listOrders())).rejects.toMatchObject({ limitBytes: bytes - 1 });
      const page = bytes + '{"orders":[]}'.length;
      expect(await readAll(at({ maxPageBytes: page }).listOrderPages())).toHaveLength(1);
      await expect(readAll(at({ maxPageBytes: page - 1 }).listOrderPages())).rejects.toBeInstanceOf(ResponseTooLargeError);
    } finally {
      server.close();
    }
  });
});

describe('bounds on time: every wait for the server, the list included', () => {
  it('ends a call whose answer never starts after idleTimeoutMs per attempt: ConnectionError, for the list and a cancel', async () => {
    const options = { idleTimeoutMs: 300, retry: { maxAttempts: 2, backoffMs: 10 } };
    const started = Date.now();
    const list = await caught(readAll(client('silent', options).listOrders()));
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    expect(list).toBeInstanceOf(ConnectionError);
    expect(list).toMatchObject({ code: 'client_connection_failed', attempts: 2 });
    expect((list as Error).message).toContain('sent nothing for 300 ms (idleTimeoutMs)');
    await expect(client('silent', options).cancelOrder(1n)).rejects.toMatchObject({ name: 'ConnectionError', attempts: 2 });
    // Each attempt the server saw was closed by the client (on a busy machine one may end before the server sees it).
    expect(hostile.seen.length).toBeLessThanOrEqual(4);
    expect((await closedEarly()).every(Boolean)).toBe(true);
  });

  it('bounds the wait for an answer by default: 30 s, the list included', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const list = caught(readAll(client('silent', { retry: { maxAttempts: 1 } }).listOrders()));
      // Real turns of the event loop (vi.waitFor would advance the faked timers) until the request is in.
      while (hostile.seen.length === 0) await new Promise((resolve) => setImmediate(resolve));
      await vi.advanceTimersByTimeAsync(clientDefaults.idleTimeoutMs - 1);
      expect(await Promise.race([list, Promise.resolve('pending')])).toBe('pending');
      await vi.advanceTimersByTimeAsync(1);
      expect(await list).toMatchObject({ name: 'ConnectionError', message: expect.stringContaining('30000 ms') });
    } finally {
      vi.useRealTimers();
    }
  });

  it('reads an error body within one idle bound, however it is dripped', async () => {
    const error = await caught(client('drip-error', { idleTimeoutMs: 500, retry: { maxAttempts: 1 } }).cancelOrder(1n));
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error).toMatchObject({ status: 503, requestId: 'req-hostile' });
    expect((error as Error).message).toContain('did not arrive within 500 ms (idleTimeoutMs)');
    expect(await closedEarly()).toEqual([true]);
  });
});

describe('no key in any error', () => {
  const everything = (error: unknown) => `${inspect(error, { depth: 10 })}${JSON.stringify(error)}${(error as Error).stack}`;

  it.each(['echo-text', 'echo-record'] as const)(
    'scrubs what %s echoes from the message, the stack, the request id and the causes',
    async (kind) => {
      const retried: unknown[] = [];
      const hooks = { beforeRetry: ({ error }: { error: unknown }) => void retried.push(error) };
      const error = await caught(client(kind, { hooks, retry: { maxAttempts: 2, retryStatuses: [500], backoffMs: 10 } }).cancelOrder(1n));
      expect(error).toBeInstanceOf(kind === 'echo-text' ? InvalidResponseError : InternalServerError);
      expect(hostile.seen[0]!.headers.authorization).toBe(`Bearer ${key}`);
      for (const seen of [error, ...retried]) {
        expect(everything(seen)).not.toContain(key.slice(8, 24));
        expect((seen as Error).message).toContain('Bearer [redacted]');
      }
      if (kind === 'echo-text') expect((error as StoreOrdersError).requestId).toBe('[redacted]');
    },
  );

  it('scrubs the key and bearer tokens, raw or percent-encoded, and any 8 characters of the key left by a cut', () => {
    const scrub = keyScrubber(key);
    expect(scrub(`a ${key} b`)).toBe('a [redacted] b');
    expect(scrub('authorization: bearer abc.def-ghi, next')).toBe('authorization: Bearer [redacted], next');
    expect(scrub(`got "${key.slice(0, 20)}…`)).toBe('got "[redacted]…');
    expect(scrub(`…${key.slice(12)}"`)).toBe('…[redacted]"');
    expect(scrub(encodeURIComponent(`k=${key}&x`))).toBe('k%3D[redacted]%26x');
    expect(scrub('HTTP 502 without an Error record: <html>bad gateway</html>')).toBe(
      'HTTP 502 without an Error record: <html>bad gateway</html>',
    );
  });
});

describe('a read that cannot loop', () => {
  it('ends a v2 read whose server repeats its cursor with InvalidResponseError client_cursor_repeated', async () => {
    const error = await caught(client('repeated-cursor').collectOrders({ limit: 10 }));
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error).toMatchObject({ code: 'client_cursor_repeated', status: 200 });
    expect(hostile.seen.map((request) => request.path)).toEqual([
      '/v2/store/orders?pageSize=10',
      '/v2/store/orders?pageSize=10&cursor=c2FtZQ',
    ]);
  });

  it('stops at maxPages with PageLimitError, whose cursor resumes the read', async () => {
    const error = await caught(readAll(client('ten-pages').listOrdersPaged({ maxPages: 3 })));
    expect(error).toMatchObject({ name: 'PageLimitError', code: 'client_page_limit', maxPages: 3, cursor: '3' });
    expect(error).toBeInstanceOf(PageLimitError);
    const rest = await readAll(client('ten-pages').listOrdersPaged({ cursor: (error as PageLimitError).cursor }));
    expect(rest.map((order) => order.id)).toEqual([3n, 4n, 5n, 6n, 7n, 8n, 9n]);
    await expect(readAll(client('ten-pages').listOrderPages({ maxPages: 0 }))).rejects.toThrow(TypeError);
  });
});

describe('Retry-After as RFC 9110 says, and timeouts and aborts as StoreOrdersErrors', () => {
  it('reads delay-seconds (digits) and the three HTTP-date forms; anything else is absent', () => {
    const now = Date.parse('1994-11-06T08:49:00Z');
    expect(retryAfterSeconds(' 120 ', now)).toBe(120);
    for (const date of ['Sun, 06 Nov 1994 08:49:37 GMT', 'Sunday, 06-Nov-94 08:49:37 GMT', 'Sun Nov  6 08:49:37 1994'])
      expect(retryAfterSeconds(date, now), date).toBe(37);
    for (const odd of ['1.5', '-5', '+5', '1e3', 'soon', '', '5 s', 'Sun, 06 Nov 1994 25:49:37 GMT', '2026-11-25T10:00:10Z'])
      expect(retryAfterSeconds(odd, now), odd).toBeUndefined();
  });

  it('backs off on an unreadable Retry-After instead of retrying at once', async () => {
    const server = await testServer();
    try {
      server.handler = (_request, response) =>
        json(response, 503, '{"code":"service_unavailable","message":"busy","status":503}', { 'Retry-After': '-5' });
      const waits: number[] = [];
      const busy = new StoreOrdersClient({
        baseUrl: server.baseUrl,
        apiKey: key,
        retry: { maxAttempts: 3, backoffMs: 100, jitter: 0 },
        hooks: { beforeRetry: ({ delayMs }) => void waits.push(delayMs) },
      });
      const error = await caught(busy.cancelOrder(1n));
      expect(error).toMatchObject({ name: 'ServiceUnavailableError', retryAfterSeconds: undefined, attempts: 3 });
      expect(waits).toEqual([100, 200]);
    } finally {
      server.close();
    }
  });

  it('throws a TimeoutError holding the last answer, and an AbortError holding the reason and the last answer', async () => {
    const server = await testServer();
    try {
      server.handler = (_request, response) =>
        json(response, 503, '{"code":"service_unavailable","message":"busy","status":503}', { 'Retry-After': '5' });
      const busy = new StoreOrdersClient({ baseUrl: server.baseUrl, apiKey: key });
      const timedOut = await caught(busy.cancelOrder(1n, { timeoutMs: 300 }));
      expect(timedOut).toBeInstanceOf(TimeoutError);
      expect(timedOut).toBeInstanceOf(StoreOrdersError);
      expect(timedOut).toMatchObject({ code: 'client_timeout', attempts: 1, requestId: 'req-1' });
      expect((timedOut as Error).cause).toBeInstanceOf(ServiceUnavailableError);
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('the caller left')), 300);
      const aborted = await caught(readAll(busy.listOrderPages({ signal: controller.signal })));
      expect(aborted).toBeInstanceOf(AbortError);
      expect(aborted).toMatchObject({ code: 'client_aborted', reason: new Error('the caller left') });
      expect((aborted as Error).message).toContain('the caller left');
      expect((aborted as Error).cause).toBeInstanceOf(ServiceUnavailableError);
    } finally {
      server.close();
    }
  });
});

describe('every request names the client', () => {
  it('sends User-Agent store-orders-client/<version> node/<version> on every operation, or the caller`s own', async () => {
    expect(clientUserAgent).toBe(`store-orders-client/${clientVersion} node/${process.versions.node}`);
    await readAll(client('ok').listOrders());
    await readAll(client('ok').listOrderPages());
    await caught(client('ok').cancelOrder(1n));
    await readAll(client('ok', { userAgent: 'orders-app/2.1' }).listOrders());
    expect(hostile.seen.map((request) => request.headers['user-agent'])).toEqual([
      clientUserAgent,
      clientUserAgent,
      clientUserAgent,
      'orders-app/2.1',
    ]);
  });
});
