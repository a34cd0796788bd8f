/**
 * What a call tells about itself, as AWS SDK middleware, Octokit's hooks and Stripe's
 * `on('request')` do: hooks before each request, after each response and before each retry, the
 * request id and attempts of every successful call (`onMeta`) without changing what the calls
 * return, and the API key never in what a hook or an error holds.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CallMeta, type Hooks, StoreOrdersClient, clientUserAgent } from '../../client/src/index.ts';
import { type Handler, json, readAll, testServer } from '../lib/client.ts';

const key = 'so_test_hook-test-key-0123456789abcdef';
let service: Awaited<ReturnType<typeof testServer>>;
beforeAll(async () => {
  service = await testServer();
});
afterAll(() => service.close());
beforeEach(() => {
  service.seen.length = 0;
});

/** Answers with the handlers in turn, the last one for every further request. */
const inTurn = (...handlers: Handler[]): Handler => {
  let next = 0;
  return (request, response, url) => handlers[Math.min(next++, handlers.length - 1)]!(request, response, url);
};
const busy: Handler = (_request, response) =>
  json(response, 503, '{"code":"service_unavailable","message":"busy","status":503}', { 'Retry-After': '0', 'X-Request-Id': 'req-busy' });
const cancelled: Handler = (_request, response) => response.writeHead(204, { 'X-Request-Id': 'req-ok' }).end();

/** Hooks that record what they see, as text. */
const recorder = () => {
  const events: unknown[] = [];
  const lines: string[] = [];
  const hooks: Hooks = {
    beforeRequest: (event) => {
      events.push(event);
      lines.push(`request ${event.operation} ${event.method} ${new URL(event.url).pathname} #${event.attempt}`);
    },
    afterResponse: (event) => {
      events.push(event);
      lines.push(`response #${event.attempt} ${event.status} ${event.requestId}`);
    },
    beforeRetry: (event) => {
      events.push(event);
      lines.push(`retry after #${event.attempt}: ${event.error.code}, wait ${event.delayMs >= 0 ? 'set' : '?'}`);
    },
  };
  return { events, lines, hooks };
};
const client = (hooks: Hooks = {}) => new StoreOrdersClient({ baseUrl: service.baseUrl, apiKey: key, hooks, retry: { backoffMs: 10 } });

describe('hooks', () => {
  it('see each request, each answer and each retry, in order', async () => {
    service.handler = inTurn(busy, cancelled);
    const { lines, hooks } = recorder();
    await client(hooks).cancelOrder(9007199254740993n);
    expect(lines).toEqual([
      'request cancelOrder DELETE /v1/store/orders/9007199254740993 #1',
      'response #1 503 req-busy',
      'retry after #1: service_unavailable, wait set',
      'request cancelOrder DELETE /v1/store/orders/9007199254740993 #2',
      'response #2 204 req-ok',
    ]);
  });

  it('never see the key: Authorization reaches them redacted, and nothing they get holds the key', async () => {
    service.handler = inTurn(busy, (_request, response) => json(response, 200, '[{"id":1}]'));
    const { events, hooks } = recorder();
    await readAll(client(hooks).listOrders());
    expect(events.length).toBeGreaterThan(3);
    expect((events[0] as { headers: Record<string, string> }).headers).toEqual({
      authorization: '[redacted]',
      accept: 'application/json',
      'user-agent': clientUserAgent,
    });
    const seen = JSON.stringify(events, (_name, value: unknown) => (value instanceof Error ? { ...value, message: value.message } : value));
    expect(seen).not.toContain(key);
    // The request itself did carry it.
    expect(service.seen[0]!.headers.authorization).toBe(`Bearer ${key}`);
  });

  it('fail the call when one throws, without a retry', async () => {
    service.handler = cancelled;
    const broken = new Error('hook bug');
    await expect(client({ afterResponse: () => Promise.reject(broken) }).cancelOrder(1n)).rejects.toBe(broken);
    await expect(client({ beforeRequest: () => Promise.reject(broken) }).cancelOrder(1n)).rejects.toBe(broken);
    expect(service.seen).toHaveLength(1);
  });
});

describe('the metadata of a successful call (onMeta)', () => {
  it('cancelOrder still resolves to undefined; onMeta has its request id, attempts and wait', async () => {
    service.handler = inTurn(busy, cancelled);
    const metas: CallMeta[] = [];
    await expect(client().cancelOrder(1n, { onMeta: (meta) => metas.push(meta) })).resolves.toBeUndefined();
    expect(metas).toEqual([{ operation: 'cancelOrder', status: 204, requestId: 'req-ok', attempts: 2, retryDelayMs: expect.any(Number) }]);
  });

  it('each v2 page has its own; the v1 list has one once read whole, none when the loop left early', async () => {
    let page = 0;
    service.handler = (_request, response, url) =>
      url.pathname.startsWith('/v2/')
        ? json(response, 200, page++ === 0 ? '{"orders":[{"id":1}],"nextCursor":"c"}' : '{"orders":[{"id":2}]}', {
            'X-Request-Id': `req-page-${page}`,
          })
        : json(response, 200, '[{"id":1},{"id":2}]', { 'X-Request-Id': 'req-list' });
    const metas: CallMeta[] = [];
    const onMeta = (meta: CallMeta) => metas.push(meta);
    const pages = await readAll(client().listOrderPages({ onMeta }));
    // What the pages are is unchanged.
    expect(pages).toEqual([
      { orders: [{ id: 1n }], cursor: 'c' },
      { orders: [{ id: 2n }], cursor: undefined },
    ]);
    expect(metas.map((meta) => [meta.operation, meta.requestId, meta.attempts])).toEqual([
      ['listOrderPages', 'req-page-1', 1],
      ['listOrderPages', 'req-page-2', 1],
    ]);
    metas.length = 0;
    expect(await readAll(client().listOrders({ onMeta }))).toEqual([{ id: 1n }, { id: 2n }]);
    for await (const _order of client().listOrders({ onMeta })) break;
    expect(metas.map((meta) => [meta.operation, meta.requestId, meta.status])).toEqual([['listOrders', 'req-list', 200]]);
  });
});
