import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../infra/openapi/document.ts';
import { order, request, startTestApi } from '../lib/local-api.ts';
import { parseJsonExact, parseJsonWithSources } from '../lib/openapi-contract.ts';

type Answer = { status: number; headers?: Record<string, string>; body?: string };

/**
 * A stand-in server whose answers each test chooses, to prove that request() rejects what
 * the document does not describe. Its base URL ends in /v1, like the gateway's.
 */
const fakeApi = async () => {
  let answer: Answer = { status: 500 };
  const server: Server = createServer((_req, res) => {
    res.writeHead(answer.status, answer.headers ?? {});
    res.end(answer.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    answer: (next: Answer) => {
      answer = next;
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
};

const envelope = { 'Cache-Control': 'no-store', 'X-Request-Id': 'req-1' };
const json = { ...envelope, 'Content-Type': 'application/json' };
const listHeaders = { ...json, Vary: 'Accept-Encoding' };

describe('the contract check in request()', () => {
  let fake: Awaited<ReturnType<typeof fakeApi>>;
  beforeAll(async () => {
    fake = await fakeApi();
  });
  afterAll(() => fake?.close());

  it('accepts an answer the document describes, int64 ids at the top of the range included', async () => {
    fake.answer({
      status: 200,
      headers: listHeaders,
      body: '[{"id":9223372036854775807,"petId":-9223372036854775808,"status":"pending"}]',
    });
    const response = await request(fake.url, 'GET', '/store/orders');
    expect(response.status).toBe(200);
  });

  it('fails on a status the document does not list for the operation', async () => {
    fake.answer({ status: 418, headers: json, body: '{"code":"teapot","message":"no","status":418}' });
    await expect(request(fake.url, 'GET', '/store/orders')).rejects.toThrow(
      /listOrders \(GET \/v1\/store\/orders\) answered 418, a status the document does not list for it \(documented: 200, 400, 401, 404, 406, 429, 500, 503, 504\)/,
    );
  });

  it('fails on a 200 for cancelOrder, whose success is 204', async () => {
    fake.answer({ status: 200, headers: json, body: '{}' });
    await expect(request(fake.url, 'DELETE', '/store/orders/7')).rejects.toThrow(
      /cancelOrder .* answered 200, a status the document does not list/,
    );
  });

  it('fails on a body that does not match the schema: an id sent as a string', async () => {
    fake.answer({ status: 200, headers: listHeaders, body: '[{"id":"7"}]' });
    await expect(request(fake.url, 'GET', '/store/orders')).rejects.toThrow(/body\/0\/id must be integer/);
  });

  it('fails on an id beyond int64, judged from its digits, not from a rounded double', async () => {
    // 2^63 rounds to the same double as int64 max: only the source text tells them apart.
    expect(JSON.parse('9223372036854775808')).toBe(JSON.parse('9223372036854775807'));
    fake.answer({ status: 200, headers: listHeaders, body: '[{"id":9223372036854775808}]' });
    await expect(request(fake.url, 'GET', '/store/orders')).rejects.toThrow(
      /body\/0\/id must be within int64 \(sent: 9223372036854775808\)/,
    );
  });

  it('fails on a fraction that a double would round to an integer', async () => {
    expect(Number.isInteger(JSON.parse('9007199254740993.5'))).toBe(true);
    fake.answer({ status: 200, headers: listHeaders, body: '[{"id":9007199254740993.5}]' });
    await expect(request(fake.url, 'GET', '/store/orders')).rejects.toThrow(
      /body\/0\/id must be an integer literal \(sent: 9007199254740993.5\)/,
    );
  });

  it('fails on an error code the document does not list for that status', async () => {
    fake.answer({ status: 409, headers: json, body: '{"code":"order_not_found","message":"x","status":409}' });
    await expect(request(fake.url, 'DELETE', '/store/orders/7')).rejects.toThrow(/body\/code must be equal to one of the allowed values/);
  });

  it('fails on an Error record whose status is not the response status', async () => {
    fake.answer({ status: 404, headers: json, body: '{"code":"order_not_found","message":"x","status":409}' });
    await expect(request(fake.url, 'DELETE', '/store/orders/7')).rejects.toThrow(/body\/status must be equal to constant/);
  });

  it('fails when a required header is missing', async () => {
    fake.answer({ status: 401, headers: json, body: '{"code":"unauthorized","message":"x","status":401}' });
    await expect(request(fake.url, 'GET', '/store/orders')).rejects.toThrow(/required header WWW-Authenticate is missing/);
    fake.answer({ status: 204, headers: { 'Cache-Control': 'no-store' } });
    await expect(request(fake.url, 'DELETE', '/store/orders/7')).rejects.toThrow(/required header X-Request-Id is missing/);
  });

  it('fails on a header value the document does not allow', async () => {
    fake.answer({ status: 204, headers: { ...envelope, 'Cache-Control': 'max-age=60' } });
    await expect(request(fake.url, 'DELETE', '/store/orders/7')).rejects.toThrow(/header Cache-Control \(max-age=60\) does not match/);
    fake.answer({
      status: 503,
      headers: { ...json, 'Retry-After': 'soon' },
      body: '{"code":"service_unavailable","message":"x","status":503}',
    });
    await expect(request(fake.url, 'GET', '/store/orders')).rejects.toThrow(/header Retry-After is not JSON/);
  });

  it('fails on a body that is not JSON, or not sent as application/json', async () => {
    fake.answer({ status: 200, headers: listHeaders, body: '[{"id":1}' });
    await expect(request(fake.url, 'GET', '/store/orders')).rejects.toThrow(/body is not JSON/);
    fake.answer({ status: 200, headers: { ...listHeaders, 'Content-Type': 'text/plain' }, body: '[]' });
    await expect(request(fake.url, 'GET', '/store/orders')).rejects.toThrow(/Content-Type is text\/plain, not application\/json/);
  });

  it('expects only 404 route_not_found where no operation exists', async () => {
    fake.answer({ status: 404, headers: json, body: '{"code":"route_not_found","message":"x","status":404}' });
    expect((await request(fake.url, 'POST', '/store/orders')).status).toBe(404);
    fake.answer({ status: 404, headers: json, body: '{"code":"order_not_found","message":"x","status":404}' });
    await expect(request(fake.url, 'GET', '/pets/1')).rejects.toThrow(/code is "order_not_found", not "route_not_found"/);
    fake.answer({ status: 200, headers: json, body: '[]' });
    await expect(request(fake.url, 'PUT', '/store/orders/1')).rejects.toThrow(/no operation of the document\) answered 200/);
  });
});

describe('the contract check against the local service', () => {
  let api: Awaited<ReturnType<typeof startTestApi>>;
  beforeAll(async () => {
    api = await startTestApi([order('9223372036854775807', 'pending', { petId: '9007199254740993' }), order('2', 'shipped')]);
  });
  afterAll(() => api?.close());

  it('passes every answer the service gives in the committed document', async () => {
    expect((await request(api.url, 'GET', '/store/orders', api.auth)).status).toBe(200);
    expect((await request(api.url, 'GET', '/store/orders', { ...api.auth, 'Accept-Encoding': 'gzip' })).status).toBe(200);
    expect((await request(api.url, 'GET', '/store/orders')).status).toBe(401);
    expect((await request(api.url, 'DELETE', '/store/orders/2', api.auth)).status).toBe(409);
    expect((await request(api.url, 'DELETE', '/store/orders/3', api.auth)).status).toBe(404);
    expect((await request(api.url, 'DELETE', '/store/orders/x', api.auth)).status).toBe(400);
    expect((await request(api.url, 'DELETE', '/store/orders/9223372036854775807', api.auth)).status).toBe(204);
  });

  it('fails a real answer once the document stops listing its status', async () => {
    const document = buildOpenApiDocument();
    delete document.paths?.['/v1/store/orders/{orderId}']?.delete?.responses?.['404'];
    await expect(request(api.url, 'DELETE', '/store/orders/3', api.auth, { contract: document })).rejects.toThrow(
      /cancelOrder \(DELETE \/v1\/store\/orders\/\{orderId\}\) answered 404, a status the document does not list/,
    );
  });

  it('fails a real body once the document describes it differently', async () => {
    const document = buildOpenApiDocument();
    const order = document.components?.schemas?.Order as { properties: Record<string, unknown> };
    order.properties.id = { type: 'string' };
    await expect(request(api.url, 'GET', '/store/orders', api.auth, { contract: document })).rejects.toThrow(/body\/0\/id must be string/);
  });
});

describe('parsing JSON without losing digits', () => {
  it('records the source text of every number', () => {
    const { value, sources } = parseJsonWithSources('{"a":[9223372036854775807,1.50]}');
    const list = (value as { a: number[] }).a;
    expect(sources.get(list)?.get('0')).toBe('9223372036854775807');
    expect(sources.get(list)?.get('1')).toBe('1.50');
  });

  it('gives a client bigints above 2^53 − 1 and numbers below', () => {
    expect(parseJsonExact('[9223372036854775807,9007199254740993,9007199254740991,-9223372036854775808,1.5,1e300]')).toEqual([
      9223372036854775807n,
      9007199254740993n,
      9007199254740991,
      -9223372036854775808n,
      1.5,
      1e300,
    ]);
  });
});
