/**
 * The client package's logic against a tiny HTTP server in the test: the v2 paging (pages in the
 * contract's shape, resume, split), each v2 error code, connection failures and retries, timeouts
 * and aborts, answers that are not the contract, and the JSON parser against JSON.parse.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  BadRequestError,
  ConnectionError,
  InvalidCursorError,
  InvalidResponseError,
  JsonArrayStream,
  JsonElementTooLargeError,
  type Order,
  parseJsonExact,
  ResponseCutError,
  ServiceUnavailableError,
  StoreOrdersClient,
} from '../../client/src/index.ts';
import { retryDelayMs, defaultRetry } from '../../client/src/http.ts';
import { retryAfterSeconds } from '../../client/src/failures.ts';
import { readAll } from '../lib/client.ts';

type Handler = (request: IncomingMessage, response: ServerResponse, url: URL) => void;
let server: Server;
let baseUrl: string;
let handler: Handler;
const seen: URL[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url!, 'http://localhost');
    seen.push(url);
    handler(request, response, url);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});
beforeEach(() => {
  seen.length = 0;
});

const json = (response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'Content-Type': 'application/json', 'X-Request-Id': 'req-1', ...headers });
  response.end(body);
};
const errorRecord = (response: ServerResponse, status: number, code: string, headers: Record<string, string> = {}) =>
  json(response, status, JSON.stringify({ code, message: `${code} happened`, status }), headers);
/** Answers with the handlers in turn, the last one for every further request. */
const inTurn = (...handlers: Handler[]): Handler => {
  let next = 0;
  return (request, response, url) => handlers[Math.min(next++, handlers.length - 1)]!(request, response, url);
};
const client = (options: Partial<ConstructorParameters<typeof StoreOrdersClient>[0]> = {}) =>
  new StoreOrdersClient({ baseUrl, apiKey: 'key-0123456789abcdef', retry: { backoffMs: 10 }, ...options });

// ---------------------------------------------------------------------------------------------
// v2 pages, as the contract serves them: ids written as JSON numbers from exact text.

const store = Array.from({ length: 23 }, (_, i) => ({ id: 9007199254740993n + BigInt(i) * 2n, petId: 9223372036854775807n - BigInt(i) }));
const orderJson = (order: { id: bigint; petId: bigint }) => `{"id":${order.id},"petId":${order.petId},"status":"pending"}`;
/**
 * The v2 list over `store`: the cursor is base64url of the next index; the page at index 10 is
 * first served empty (cursor "10!", same index), as the contract allows, without being the last.
 */
const v2: Handler = (request, response, url) => {
  if (request.headers.authorization !== 'Bearer key-0123456789abcdef') return errorRecord(response, 401, 'unauthorized');
  if (url.pathname !== '/v2/store/orders') return errorRecord(response, 404, 'route_not_found');
  const cursor = url.searchParams.get('cursor');
  const text = cursor === null ? '0' : Buffer.from(cursor, 'base64url').toString();
  if (cursor !== null && url.searchParams.get('status') !== 'pending') return errorRecord(response, 400, 'cursor_mismatch');
  const start = Number.parseInt(text, 10);
  const size = start === 10 && !text.endsWith('!') ? 0 : Number(url.searchParams.get('pageSize') ?? 100);
  const page = store.slice(start, start + size);
  const nextText = size === 0 ? `${start}!` : start + size < store.length ? String(start + size) : undefined;
  const next = nextText === undefined ? undefined : Buffer.from(nextText).toString('base64url');
  json(response, 200, `{"orders":[${page.map(orderJson).join(',')}]${next === undefined ? '' : `,"nextCursor":"${next}"`}}`);
};

describe('listOrderPages (v2)', () => {
  it('pages through every order once, ids exact, an empty page not taken for the last, the cursor of each page resuming after it', async () => {
    handler = v2;
    const pages = await readAll(client().listOrderPages({ status: 'pending', pageSize: 5 }));
    expect(pages.flatMap((page) => page.orders)).toEqual(store.map((order) => ({ ...order, status: 'pending' }) satisfies Order));
    expect(pages.map((page) => page.orders.length)).toEqual([5, 5, 0, 5, 5, 3]);
    expect(pages.at(-1)!.cursor).toBeUndefined();
    expect(pages.slice(0, -1).every((page) => typeof page.cursor === 'string')).toBe(true);
    // Each request after the first carries the previous page's cursor and the same query.
    expect(seen.map((url) => url.pathname)).toEqual(Array(6).fill('/v2/store/orders'));
    expect(seen.map((url) => url.searchParams.get('cursor'))).toEqual([null, ...pages.slice(0, -1).map((page) => page.cursor)]);
    expect(seen.every((url) => url.searchParams.get('status') === 'pending' && url.searchParams.get('pageSize') === '5')).toBe(true);
  });

  it('resumes from a saved cursor: the pages after it, none before', async () => {
    handler = v2;
    const [first, second] = await readAll(client().listOrderPages({ status: 'pending', pageSize: 5 }));
    const resumed = await readAll(client().listOrderPages({ status: 'pending', pageSize: 5, cursor: second!.cursor! }));
    expect([...first!.orders, ...second!.orders, ...resumed.flatMap((page) => page.orders)].map((order) => order.id)).toEqual(
      store.map((order) => order.id),
    );
  });

  it('sends every filter of the contract by its name, dates as RFC 3339', async () => {
    handler = (_request, response) => json(response, 200, '{"orders":[]}');
    await readAll(
      client().listOrderPages({
        status: 'shipped',
        shipDateFrom: new Date('2026-01-01T00:00:00Z'),
        shipDateTo: '2026-02-01T00:00:00+01:00',
        pageSize: 1000,
        part: 2,
        parts: 4,
      }),
    );
    expect(Object.fromEntries(seen[0]!.searchParams)).toEqual({
      status: 'shipped',
      shipDateFrom: '2026-01-01T00:00:00.000Z',
      shipDateTo: '2026-02-01T00:00:00+01:00',
      pageSize: '1000',
      part: '2',
      parts: '4',
    });
    expect(seen).toHaveLength(1);
  });

  it.each([
    ['invalid_query_parameter', BadRequestError],
    ['invalid_cursor', InvalidCursorError],
    ['cursor_expired', InvalidCursorError],
    ['cursor_mismatch', InvalidCursorError],
  ] as const)('throws %s as %o, not retried', async (code, ErrorClass) => {
    handler = (_request, response) => errorRecord(response, 400, code);
    const error = await readAll(client().listOrderPages({ cursor: 'x' })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error).toMatchObject({ code, status: 400, requestId: 'req-1', attempts: 1 });
    expect(seen).toHaveLength(1);
  });

  it('asks for a page again when its body is cut, and yields it once', async () => {
    handler = inTurn((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
      response.write('{"orders":[{"id":1}');
      setTimeout(() => response.destroy(), 20);
    }, v2);
    const pages = await readAll(client().listOrderPages({ pageSize: 100 }));
    expect(pages.flatMap((page) => page.orders)).toHaveLength(store.length);
    expect(seen).toHaveLength(2);
  });

  it('refuses a page that is not {"orders": [...], "nextCursor"?: "..."}', async () => {
    handler = (_request, response) => json(response, 200, '{"orders":{}}');
    await expect(readAll(client().listOrderPages())).rejects.toBeInstanceOf(InvalidResponseError);
    handler = (_request, response) => json(response, 200, '{"orders":[{"petId":1}]}');
    await expect(readAll(client().listOrderPages())).rejects.toMatchObject({ code: 'client_invalid_response' });
  });
});

// ---------------------------------------------------------------------------------------------

describe('retries, timeouts and aborts', () => {
  it('retries a failed connection and then succeeds', async () => {
    handler = inTurn(
      (request) => request.socket.destroy(),
      (_request, response) => response.writeHead(204).end(),
    );
    await expect(client().cancelOrder(1n)).resolves.toBeUndefined();
    expect(seen).toHaveLength(2);
  });

  it('throws ConnectionError once every attempt failed to connect', async () => {
    handler = (request) => request.socket.destroy();
    const error = await client()
      .cancelOrder(1n, { retry: { maxAttempts: 3 } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ code: 'client_connection_failed', status: 0, attempts: 3 });
    expect(seen).toHaveLength(3);
  });

  it('retries 504 gateway_timeout and 503 with an HTTP-date Retry-After; answers 400 bad_request at once', async () => {
    handler = inTurn(
      (_request, response) => errorRecord(response, 504, 'gateway_timeout', { 'Retry-After': '0' }),
      (_request, response) =>
        errorRecord(response, 503, 'service_unavailable', { 'Retry-After': new Date(Date.now() - 1000).toUTCString() }),
      (_request, response) => response.writeHead(204).end(),
    );
    await client().cancelOrder(7n);
    expect(seen.map((url) => url.pathname)).toEqual(Array(3).fill('/v1/store/orders/7'));
    handler = (_request, response) => errorRecord(response, 400, 'bad_request');
    await expect(client().cancelOrder(7n)).rejects.toMatchObject({ name: 'BadRequestError', code: 'bad_request', attempts: 1 });
  });

  it('does not start a retry whose wait would pass the deadline', async () => {
    handler = (_request, response) => errorRecord(response, 503, 'service_unavailable', { 'Retry-After': '2' });
    const started = Date.now();
    const error = await client()
      .cancelOrder(1n, { retry: { deadlineMs: 1000 } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject({ attempts: 1, retryAfterSeconds: 2 });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('rejects with a TimeoutError when the service does not answer within timeoutMs, and with the reason of an aborted signal', async () => {
    handler = () => undefined; // never answers
    await expect(client().cancelOrder(1n, { timeoutMs: 100 })).rejects.toMatchObject({ name: 'TimeoutError' });
    await expect(readAll(client().listOrders({ timeoutMs: 100 }))).rejects.toMatchObject({ name: 'TimeoutError' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 50);
    await expect(readAll(client().listOrderPages({ signal: controller.signal }))).rejects.toThrow('stop');
  });

  it('aborts a wait for Retry-After when the signal aborts', async () => {
    handler = (_request, response) => errorRecord(response, 429, 'too_many_requests', { 'Retry-After': '30' });
    const started = Date.now();
    await expect(client().cancelOrder(1n, { signal: AbortSignal.timeout(100) })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('waits at least Retry-After, adds at most `jitter` of it, and backs off exponentially without one', () => {
    expect(retryDelayMs(defaultRetry, 1, 1, () => 0)).toBe(1000);
    expect(retryDelayMs(defaultRetry, 1, 1, () => 0.999)).toBeCloseTo(1249.75);
    expect([1, 2, 3, 10].map((attempt) => retryDelayMs(defaultRetry, attempt, undefined, () => 0))).toEqual([200, 400, 800, 5000]);
    expect(retryAfterSeconds('3')).toBe(3);
    expect(retryAfterSeconds('Wed, 25 Nov 2026 10:00:10 GMT', Date.parse('2026-11-25T10:00:00Z'))).toBe(10);
    expect(retryAfterSeconds('soon')).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------

describe('listOrders (v1) over the wire', () => {
  it('yields the orders before a cut, then throws ResponseCutError', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json', 'X-Request-Id': 'req-cut' });
      response.write('[{"id":9007199254740993},{"id":2');
      setTimeout(() => response.destroy(), 50);
    };
    const orders: Order[] = [];
    const error = await (async () => {
      for await (const order of client().listOrders()) orders.push(order);
    })().catch((caught: unknown) => caught);
    expect(orders).toEqual([{ id: 9007199254740993n }]);
    expect(error).toBeInstanceOf(ResponseCutError);
    expect(error).toMatchObject({ code: 'client_response_cut', ordersRead: 1, requestId: 'req-cut' });
  });

  it('takes a body that ends cleanly before "]" for a cut too', async () => {
    handler = (_request, response) => json(response, 200, '[{"id":1},');
    await expect(readAll(client().listOrders())).rejects.toBeInstanceOf(ResponseCutError);
  });

  it('refuses an answer that is not an array of orders, and an error status without an Error record', async () => {
    handler = (_request, response) => json(response, 200, '{"id":1}');
    await expect(readAll(client().listOrders())).rejects.toMatchObject({ name: 'InvalidResponseError', code: 'client_invalid_response' });
    handler = (_request, response) => json(response, 200, '[1]');
    await expect(readAll(client().listOrders())).rejects.toBeInstanceOf(InvalidResponseError);
    handler = (_request, response) => response.writeHead(502, { 'Content-Type': 'text/html' }).end('<html>bad gateway</html>');
    await expect(client().cancelOrder(1n)).rejects.toMatchObject({ name: 'InvalidResponseError', status: 502 });
  });

  it('closes the connection when the loop stops early', async () => {
    let closed!: Promise<unknown>;
    handler = (request, response) => {
      closed = once(request.socket, 'close');
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.write('[{"id":1},');
      const more = setInterval(() => response.write('{"id":2},'), 10);
      response.on('close', () => clearInterval(more));
    };
    for await (const order of client().listOrders()) {
      expect(order.id).toBe(1n);
      break;
    }
    await closed;
  });

  it('requires a base URL ending in /v1 and a key', () => {
    expect(() => new StoreOrdersClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'k' })).toThrow(TypeError);
    expect(() => new StoreOrdersClient({ baseUrl: 'http://127.0.0.1:3000/v1/', apiKey: '' })).toThrow(TypeError);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the JSON parser', () => {
  const int64Keys = new Set(['id', 'petId']);
  /** `source` pushed to `stream` cut at `cuts` (each taken modulo its length), then ended: every element read. */
  const inChunks = (stream: JsonArrayStream, source: string, cuts: number[]) => {
    const points = [...new Set(cuts.map((cut) => cut % (source.length + 1)))].sort((a, b) => a - b);
    const parsed: unknown[] = [];
    let from = 0;
    for (const point of [...points, source.length]) {
      parsed.push(...stream.push(source.slice(from, point)));
      from = point;
    }
    stream.end();
    return parsed;
  };
  const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
  const anOrder = fc.record(
    {
      id: int64,
      petId: int64,
      quantity: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      shipDate: fc.string(),
      complete: fc.boolean(),
      status: fc.string({ unit: 'grapheme' }),
      // Any JSON an order may carry later, but no nested id (the parser reads every "id" as int64).
      extra: fc.jsonValue().filter((value) => !/"(id|petId)"/.test(JSON.stringify(value))),
    },
    { requiredKeys: ['id'] },
  );
  /** JSON text of orders, int64 written with every digit, the rest as JSON.stringify writes it. */
  const text = (orders: Record<string, unknown>[], space: string) =>
    `${space}[${orders
      .map(
        (order) =>
          `{${Object.entries(order)
            .map(([key, value]) => `${JSON.stringify(key)}:${space}${typeof value === 'bigint' ? value : JSON.stringify(value)}`)
            .join(`,${space}`)}}`,
      )
      .join(`,${space}`)}]${space}`;

  it('streams any array of orders in any chunking to what JSON.parse reads, int64 exact', () => {
    fc.assert(
      fc.property(
        fc.array(anOrder, { maxLength: 8 }),
        fc.constantFrom('', ' ', '\n\t '),
        fc.array(fc.nat(), { maxLength: 6 }),
        (orders, space, cuts) => {
          const source = text(orders, space);
          const parsed = inChunks(new JsonArrayStream(int64Keys), source, cuts);
          // What JSON.parse reads, with the int64 fields (which it rounds) taken from the orders themselves.
          const expected = (JSON.parse(source) as Record<string, unknown>[]).map((order, i) => ({
            ...order,
            id: orders[i]!.id,
            ...(orders[i]!.petId === undefined ? {} : { petId: orders[i]!.petId }),
          }));
          expect(parsed).toEqual(expected);
        },
      ),
    );
  });

  it('streams any array whose elements are within maxElementBytes (UTF-8) as JSON.parse reads it, and refuses one past it, in any chunking', () => {
    const element = fc.record({ id: fc.integer(), note: fc.string({ unit: 'binary', maxLength: 30 }) });
    fc.assert(
      fc.property(
        fc.array(element, { maxLength: 6 }),
        fc.integer({ min: 10, max: 120 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (items, max, cuts) => {
          const source = JSON.stringify(items);
          const largest = Math.max(0, ...items.map((item) => new TextEncoder().encode(JSON.stringify(item)).length));
          const read = () => inChunks(new JsonArrayStream(new Set(['id']), { maxElementBytes: max }), source, cuts);
          if (largest > max) expect(read).toThrow(JsonElementTooLargeError);
          else expect(read()).toEqual(items.map((item) => ({ ...item, id: BigInt(item.id) })));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('refuses what is not JSON, and a non-integer int64', () => {
    for (const bad of ['{"id":1.5}', '{"id":"1"}', '{"id":null}', '{"a":01}', '{"a":tru}', '{"a":"x', '{"a":1,}', '[1] 2', '{"a":"\\x"}'])
      expect(() => parseJsonExact(bad, int64Keys), bad).toThrow();
    // "__proto__" is an own property, as JSON.parse makes it.
    const parsed = parseJsonExact('{"__proto__":{"x":1},"id":1}', int64Keys) as Record<string, unknown>;
    expect(Object.getOwnPropertyDescriptor(parsed, '__proto__')?.value).toEqual({ x: 1 });
    expect(parsed.id).toBe(1n);
  });
});
