import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../infra/ops/key-store.ts';
import { errorCodes } from '../../shared/errors.ts';
import { type RawResponse, sendRaw } from '../lib/raw-http.ts';
import { order, startTestApi } from '../lib/local-api.ts';

// Raw requests, as a hostile or careless client would send them, to the local gateway in front
// of the real handlers. Whatever arrives, the answer is never a 5xx (DynamoDB is healthy here),
// never lets a wrong key through, and is an Error record whenever it is not a success.

let api: Awaited<ReturnType<typeof startTestApi>>;
let port: number;
let revokedKey: string;
const unknownKey = 'so_test_unknown-key-never-issued-00000000000';

beforeAll(async () => {
  api = await startTestApi([
    order('1', 'pending'),
    order('2', 'shipped'),
    order('3', 'cancelled'),
    order('9223372036854775807', 'pending'),
    ...Array.from({ length: 40 }, (_, i) => order(String(100 + i), 'pending')),
  ]);
  port = Number(new URL(api.url).port);
  const revoked = await createApiKey(api.apiKeys, { name: 'revoked', prefix: 'so_test_' });
  await revokeApiKey(api.apiKeys, revoked.item.keyId);
  revokedKey = revoked.key;
});
afterAll(() => api.close());

/** Codes only the gateway gives: an answer with any other code came from a function the authorizer let through. */
const gatewayOnlyCodes = new Set(['unauthorized', 'route_not_found', 'bad_request']);

/** The rules every answer keeps; returns what the answer's Error record says (undefined for a success). */
const expectLawfulAnswer = (response: RawResponse, method: string): string | undefined => {
  expect(response.status, `no answer at all:\n${response.raw}`).toBeGreaterThan(0);
  expect(response.status, response.raw).toBeLessThan(500);
  if (response.status < 400) return undefined;
  expect(response.headers.get('content-type'), response.raw).toBe('application/json');
  if (method === 'HEAD') return undefined;
  const record = JSON.parse(response.body) as { code: string; message: string; status: number };
  expect(Object.keys(record).sort()).toEqual(['code', 'message', 'status']);
  expect(record.status, response.raw).toBe(response.status);
  expect(errorCodes[record.code as keyof typeof errorCodes]?.status, response.raw).toBe(response.status);
  expect(typeof record.message).toBe('string');
  return record.code;
};

const request = (method: string, target: string, headers: readonly (readonly [string, string])[] = [], authorization?: string) =>
  Buffer.concat([
    Buffer.from(`${method} `, 'latin1'),
    Buffer.from(target, 'utf8'),
    Buffer.from(
      ` HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${authorization === undefined ? '' : `Authorization: ${authorization}\r\n`}${headers
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('')}\r\n`,
      'latin1',
    ),
  ]);

// ----------------------------------------------------------------------------------------
// Generators
// ----------------------------------------------------------------------------------------

/** Names that are properties of every plain object: an object indexed by a client's name must not trip on them. */
const objectPropertyNames = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'prototype', '__defineGetter__'];
const tchar = fc.constantFrom(..."!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".split(''));
const token = fc.string({ unit: tchar, minLength: 1, maxLength: 12 });
const headerName = fc.oneof(fc.constantFrom(...objectPropertyNames, 'Accept-Encoding', 'X-Request-Id', 'Content-Length', 'Expect'), token);
/** Visible ASCII and spaces, sometimes bytes above 0x7f (obs-text, read as latin1). */
const headerValue = fc.string({
  unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff })).map((c) => String.fromCharCode(c)),
  maxLength: 40,
});
const method = fc.oneof(
  fc.constantFrom(
    'GET',
    'DELETE',
    'HEAD',
    'POST',
    'PUT',
    'PATCH',
    'OPTIONS',
    'TRACE',
    'CONNECT',
    'PROPFIND',
    'QUERY',
    'FOO',
    'delete',
    'get',
  ),
  token,
);
const orderId = fc.oneof(
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
  fc.constantFrom('1', '2', '3', '9223372036854775807', '007', '%31', '1.5', '1e3', '-', '', '%', '%zz', '%C3%A9', '..', '.'),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
  fc.string({ unit: 'binary', maxLength: 6 }),
);
const queryPart = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...objectPropertyNames), fc.string({ maxLength: 8 }).map(encodeURIComponent)), headerValue), {
    maxLength: 4,
  })
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&')}`));
const target = fc.oneof(
  fc
    .tuple(fc.constantFrom('/v1/store/orders', '/v1/store/orders/', '/v1/openapi.json', '/v1/pets/1', '/', '/v1', '*'), queryPart)
    .map(([path, query]) => path + query),
  fc.tuple(orderId, queryPart).map(([id, query]) => `/v1/store/orders/${id}${query}`),
  fc.string({ unit: 'binary', maxLength: 30 }).map((text) => `/${text}`),
);

// ----------------------------------------------------------------------------------------

// Counterexamples fast-check found (shrunk) before the gateway was fixed, and the cases the
// issue named, kept as they were found.
describe('regressions: what hostile input found', () => {
  const auth = () => `Bearer ${api.key}`;
  it.each([
    ['a header named __proto__', () => request('GET', '/v1/store/orders', [['__proto__', 'x']], auth()), 200, undefined],
    [
      'headers named constructor and toString',
      () =>
        request(
          'GET',
          '/v1/store/orders',
          [
            ['constructor', 'x'],
            ['toString', 'y'],
          ],
          auth(),
        ),
      200,
      undefined,
    ],
    [
      'query parameters named __proto__, constructor, valueOf',
      () => request('GET', '/v1/store/orders?__proto__=1&constructor=2&valueOf=3', [], auth()),
      200,
      undefined,
    ],
    [
      'a cancel with a query parameter named valueOf',
      () => request('DELETE', '/v1/store/orders/18446744073709551610?valueOf=x', [], auth()),
      400,
      'invalid_order_id',
    ],
    ['an unknown method (FOO)', () => request('FOO', '/v1/store/orders', [], auth()), 404, 'route_not_found'],
    ['a one-character method (!)', () => request('!', '/', [], auth()), 404, 'route_not_found'],
    ['a lower-case method (delete)', () => request('delete', '/v1/store/orders/1', [], auth()), 404, 'route_not_found'],
    ['CONNECT', () => request('CONNECT', '127.0.0.1:443', [], auth()), 404, 'route_not_found'],
    ['CONNECT to an API path', () => request('CONNECT', '/v1/store/orders/', [['hasOwnProperty', '']], auth()), 404, 'route_not_found'],
    ['a non-ASCII request target', () => request('GET', '/v1/store/orders/é', [], auth()), 400, 'bad_request'],
    [
      'headers over the 10240-byte limit',
      () => request('GET', '/v1/store/orders', [['X-Big', 'a'.repeat(16 * 1024)]], auth()),
      400,
      'bad_request',
    ],
    ['a request target over the limit', () => request('GET', `/v1/store/orders/${'1'.repeat(11_000)}`, [], auth()), 400, 'bad_request'],
    ['a header name with a space', () => request('GET', '/v1/store/orders', [['Bad Name', 'x']], auth()), 400, 'bad_request'],
    [
      'bytes that are not HTTP (a TLS hello)',
      () => Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0x0d, 0x0a, 0x0d, 0x0a]),
      400,
      'bad_request',
    ],
    ['an HTTP/1.1 request without Host', () => `GET /v1/store/orders HTTP/1.1\r\nAuthorization: ${auth()}\r\n\r\n`, 400, 'bad_request'],
    [
      'an Expect other than 100-continue',
      () => request('POST', '/v1/store/orders/%zz', [['Expect', 'Rvs']], auth()),
      404,
      'route_not_found',
    ],
    [
      'a WebSocket upgrade',
      () =>
        request(
          'GET',
          '/v1/store/orders',
          [
            ['Connection', 'Upgrade'],
            ['Upgrade', 'websocket'],
          ],
          auth(),
        ),
      200,
      undefined,
    ],
    ['Bearer and two spaces before the key', () => request('GET', '/v1/store/orders', [], `Bearer  ${api.key}`), 200, undefined],
  ] as const)('%s', async (_, raw, status, code) => {
    const response = await sendRaw(port, raw());
    expect(response.status, response.raw).toBe(status);
    expect(expectLawfulAnswer(response, 'GET')).toBe(code);
  });
});

describe('raw requests with a valid key', () => {
  it('never get a 5xx and always get an Error record when they fail (random methods, targets, headers)', async () => {
    await fc.assert(
      fc.asyncProperty(method, target, fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 }), async (verb, path, headers) => {
        const response = await sendRaw(port, request(verb, path, headers, `Bearer ${api.key}`), { head: verb === 'HEAD' });
        expectLawfulAnswer(response, verb);
      }),
      { numRuns: 250 },
    );
  });
});

describe('the Authorization header', () => {
  const wrongKey = fc.oneof(
    fc.constantFrom(unknownKey, 'so_test_'),
    // The valid key with one character more (read when the property runs, after beforeAll).
    fc.constant('x').map((extra) => `${api.key}${extra}`),
    fc.string({ unit: fc.constantFrom(...'ABCabc0123456789-._~+/'.split('')), minLength: 1, maxLength: 60 }),
  );
  const spaces = fc.integer({ min: 1, max: 4 }).map((n) => ' '.repeat(n));
  const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR');

  it('lets a wrong, revoked or malformed key through to no operation', async () => {
    const authorization = fc.oneof(
      fc.tuple(scheme, spaces, wrongKey).map(([s, gap, key]) => `${s}${gap}${key}`),
      fc.tuple(scheme, spaces).map(([s, gap]) => `${s}${gap}${revokedKey}`),
      headerValue,
      fc.constantFrom('Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', `Token ${unknownKey}`),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(['GET', '/v1/store/orders'], ['DELETE', '/v1/store/orders/1'], ['DELETE', '/v1/store/orders/abc']),
        authorization,
        async ([verb, path], value) => {
          fc.pre(value !== `Bearer ${api.key}`);
          const response = await sendRaw(port, request(verb!, path!, [], value));
          const code = expectLawfulAnswer(response, verb!);
          expect(code !== undefined && gatewayOnlyCodes.has(code), `let through:\n${value}\n${response.raw}`).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('accepts the valid key after one or more spaces, the scheme in any case (RFC 7235)', async () => {
    await fc.assert(
      fc.asyncProperty(scheme, spaces, async (s, gap) => {
        const response = await sendRaw(port, request('GET', '/v1/store/orders', [], `${s}${gap}${api.key}`));
        expect(response.status, response.raw).toBe(200);
      }),
      { numRuns: 30 },
    );
  });
});
