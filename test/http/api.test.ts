import { get } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localStage } from '../../infra/stage-config.ts';
import { createApiKey, revokeApiKey } from '../../infra/ops/key-store.ts';
import { order, request, startTestApi } from '../lib/local-api.ts';

const stored = [
  order('1', 'pending', { petId: '101', quantity: '1', shipDate: '2026-12-01T10:00:00Z', complete: false }),
  order('2', 'shipped', { petId: '102', quantity: '3', shipDate: '2026-11-02T09:30:00Z', complete: true }),
  order('3', 'cancelled'),
  order('4', 'placed'),
  order('5', 'pending'),
  order('6', 'pending'),
  order('7', 'pending'),
  order('9007199254740991', 'pending', { petId: '9007199254740991' }),
  order('9007199254740992', 'pending', { petId: '9007199254740992' }),
  order('9007199254740993', 'pending', { petId: '9007199254740993' }),
  order('9223372036854775807', 'pending', { petId: '9223372036854775807' }),
];

let api: Awaited<ReturnType<typeof startTestApi>>;
beforeAll(async () => {
  api = await startTestApi(stored);
});
afterAll(() => api.close());

const list = (headers: Record<string, string> = api.auth) => request(api.url, 'GET', '/store/orders', headers);
const cancel = (id: string, headers: Record<string, string> = api.auth) => request(api.url, 'DELETE', `/store/orders/${id}`, headers);
const storedStatus = async (id: string) => {
  const { Item } = await api.client.send(new GetItemCommand({ TableName: api.orders.tableName, Key: { id: { N: id } } }));
  return Item?.status?.S;
};

describe('GET /v1/store/orders', () => {
  it('answers 200 with every order as a JSON array, ids exact to the digit', async () => {
    const response = await list();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const ids = [...response.text.matchAll(/"id":(-?\d+)/g)].map((m) => m[1]);
    expect(ids.sort()).toEqual(stored.map((o) => o.id).sort());
    expect(response.text).toContain('{"id":9223372036854775807,"petId":9223372036854775807,"status":"pending"}');
    expect(response.text).toContain('{"id":9007199254740993,"petId":9007199254740993,"status":"pending"}');
    expect(response.body).toContainEqual({
      id: 2,
      petId: 102,
      quantity: 3,
      shipDate: '2026-11-02T09:30:00Z',
      complete: true,
      status: 'shipped',
    });
  });

  it('carries Cache-Control: no-store and the request id', async () => {
    const response = await list();
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('vary')).toBe('Accept-Encoding');
  });

  it('compresses with gzip when the client asks for it', async () => {
    const response = await fetch(`${api.url}/store/orders`, { headers: { ...api.auth, 'Accept-Encoding': 'gzip' } });
    expect(response.headers.get('content-encoding')).toBe('gzip');
    // Read to its end: a list still streaming holds the local stage's one list slot.
    expect(await response.text()).toContain('"id":9223372036854775807');
    // fetch decompresses transparently; the raw bytes must be gzip all the same.
    const raw = await new Promise<Buffer>((resolve, reject) => {
      get(`${api.url}/store/orders`, { headers: { ...api.auth, 'Accept-Encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res
          .on('data', (chunk: Buffer) => chunks.push(chunk))
          .on('end', () => resolve(Buffer.concat(chunks)))
          .on('error', reject);
      }).on('error', reject);
    });
    expect(gunzipSync(raw).toString()).toContain('"id":9223372036854775807');
  });

  it('ignores query parameters: v1 has no filtering or pagination', async () => {
    const response = await request(api.url, 'GET', '/store/orders?status=pending&limit=1', api.auth);
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(stored.length);
  });

  it('ignores stringIds values other than true, as the answer was before the parameter existed', async () => {
    const plain = await request(api.url, 'GET', '/store/orders', api.auth);
    const odd = await request(api.url, 'GET', '/store/orders?stringIds=yes', api.auth);
    expect(odd.status).toBe(200);
    expect(odd.text).toBe(plain.text);
    expect(odd.text).not.toContain('idStr');
  });

  it('answers 401 unauthorized with WWW-Authenticate when the key is missing', async () => {
    const response = await list({});
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ code: 'unauthorized', message: expect.any(String), status: 401 });
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(response.headers.get('content-type')).toBe('application/json');
  });
});

describe('authorization', () => {
  it.each([
    ['a malformed header (gateway)', { Authorization: 'Basic dXNlcjpwYXNz' }],
    ['a bearer scheme without token (gateway)', { Authorization: 'Bearer ' }],
    ['a token with characters outside RFC 6750 (gateway)', { Authorization: 'Bearer abc"def' }],
    ['an unknown key (authorizer)', { Authorization: 'Bearer so_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
  ])('answers 401 for %s on both operations', async (_, headers) => {
    for (const response of [await list(headers), await cancel('1', headers)]) {
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ code: 'unauthorized', status: 401 });
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('accepts the scheme in any letter case', async () => {
    expect((await list({ Authorization: `bearer ${api.key}` })).status).toBe(200);
  });

  it('accepts one or more spaces between the scheme and the key (RFC 7235), in the gateway pattern and in the authorizer', async () => {
    // Each header value is a cache entry of its own, so the authorizer function reads each of these.
    expect((await list({ Authorization: `Bearer  ${api.key}` })).status).toBe(200);
    expect((await cancel('7', { Authorization: `BEARER    ${api.key}` })).status).toBe(204);
  });

  it('stops accepting a revoked key once the authorizer cache has expired', async () => {
    const revocable = await startTestApi([], { stage: { ...localStage, authorizerCacheTtlSeconds: 0 } });
    try {
      const { key, item } = await createApiKey(revocable.apiKeys, { name: 'to revoke', prefix: 'so_test_' });
      const headers = { Authorization: `Bearer ${key}` };
      expect((await request(revocable.url, 'GET', '/store/orders', headers)).status).toBe(200);
      await revokeApiKey(revocable.apiKeys, item.keyId);
      const refused = await request(revocable.url, 'GET', '/store/orders', headers);
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ code: 'unauthorized' });
    } finally {
      await revocable.close();
    }
  });
});

describe('DELETE /v1/store/orders/{orderId}', () => {
  it('answers 204 with no body and cancels a pending order', async () => {
    const response = await cancel('1');
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(await storedStatus('1')).toBe('cancelled');
    const listed = (await list()).body as { id: number; status: string }[];
    expect(listed.find((o) => o.id === 1)?.status).toBe('cancelled');
  });

  it('answers 204 again when the order is already cancelled (safe retries)', async () => {
    expect((await cancel('3')).status).toBe(204);
    expect((await cancel('3')).status).toBe(204);
    expect(await storedStatus('3')).toBe('cancelled');
  });

  it('answers 409 order_already_shipped for a shipped order, which stays shipped', async () => {
    const response = await cancel('2');
    expect(response.status).toBe(409);
    expect(response.body).toEqual({ code: 'order_already_shipped', message: expect.any(String), status: 409 });
    expect(await storedStatus('2')).toBe('shipped');
  });

  it('answers 409 order_not_cancellable, naming the status, for any other status', async () => {
    const response = await cancel('4');
    expect(response.status).toBe(409);
    expect(response.body).toEqual({ code: 'order_not_cancellable', message: expect.stringContaining('"placed"'), status: 409 });
    expect(await storedStatus('4')).toBe('placed');
  });

  it('answers 404 order_not_found for an unknown id', async () => {
    const response = await cancel('424242');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ code: 'order_not_found', message: expect.any(String), status: 404 });
  });

  it('cancels ids at and around 2^53 and int64 max exactly, leaving their neighbours alone', async () => {
    expect((await cancel('9007199254740993')).status).toBe(204);
    expect((await cancel('9223372036854775807')).status).toBe(204);
    expect(await storedStatus('9007199254740993')).toBe('cancelled');
    expect(await storedStatus('9223372036854775807')).toBe('cancelled');
    expect(await storedStatus('9007199254740992')).toBe('pending');
    expect(await storedStatus('9007199254740991')).toBe('pending');
    expect((await cancel('-9223372036854775808')).status).toBe(404);
  });

  it('answers every concurrent cancel of one order with 204', async () => {
    const responses = await Promise.all(Array.from({ length: 10 }, () => cancel('5')));
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(204));
    expect(await storedStatus('5')).toBe('cancelled');
  });

  it.each([
    ['non-digits', 'abc'],
    ['a decimal', '1.5'],
    ['an exponent', '1e3'],
    ['a sign only', '-'],
    ['a value beyond int64', '9223372036854775808'],
    ['encoded junk', '%E2%98%83'],
    ['an encoded NUL', '%00'],
    ['a malformed escape', '%zz'],
    ['an absurdly long number', '9'.repeat(5000)],
  ])('answers 400 invalid_order_id for %s', async (_, id) => {
    const response = await cancel(id);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ code: 'invalid_order_id', message: expect.any(String), status: 400 });
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it('answers 404 route_not_found for an empty id (no such path)', async () => {
    expect((await cancel('')).body).toMatchObject({ code: 'route_not_found', status: 404 });
  });

  it('leaves other pending orders untouched', async () => {
    expect(await storedStatus('6')).toBe('pending');
  });
});

describe('unknown routes', () => {
  it.each([
    ['GET', '/store/orders/1'],
    ['POST', '/store/orders'],
    ['PUT', '/store/orders/1'],
    ['GET', '/store'],
    ['GET', '/pets/1'],
    ['DELETE', '/store/orders/1/extra'],
  ])('answers %s %s with 404 route_not_found', async (method, path) => {
    const response = await request(api.url, method, path, api.auth);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ code: 'route_not_found', message: expect.any(String), status: 404 });
  });

  it('answers paths outside /v1 and /v2 with 404 route_not_found, key or not', async () => {
    const base = api.url.replace(/\/v1$/, '');
    for (const path of ['/store/orders', '/v3/store/orders', '/v2/store/orders/1', '/']) {
      const response = await request(base, 'GET', path);
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 'route_not_found' });
    }
  });
});

describe('oversized requests', () => {
  it('answers 400 bad_request, as the gateway does, for a body over 10 MB', async () => {
    const response = await fetch(`${api.url}/store/orders/6`, {
      method: 'DELETE',
      headers: api.auth,
      body: Buffer.alloc(10 * 1024 * 1024 + 1),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ code: 'bad_request', message: expect.any(String), status: 400 });
    expect(await storedStatus('6')).toBe('pending');
  });
});
