import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { order, startTestApi } from '../lib/local-api.ts';
import { type RawResponse, sendRaw } from '../lib/raw-http.ts';

// What a web page rebound to 127.0.0.1 and a crafted path can reach through the local gateway,
// over loopback: only requests for the gateway's own host names are answered, and paths are
// matched as API Gateway matches them, never normalised as a URL parser would.

type Api = Awaited<ReturnType<typeof startTestApi>>;

const orders = Array.from({ length: 12 }, (_, i) => order(String(280 + i), 'pending'));

describe('the local gateway', () => {
  let api: Api;
  let port: number;
  beforeAll(async () => {
    api = await startTestApi(orders, { allowedHosts: ['orders.test', '.tunnel.example'] });
    port = Number(new URL(api.url).port);
  });
  afterAll(() => api?.close());

  const send = (method: string, target: string, host: string | readonly string[] = `127.0.0.1:${port}`): Promise<RawResponse> =>
    sendRaw(
      port,
      `${method} ${target} HTTP/1.1\r\n${[host]
        .flat()
        .map((value) => `Host: ${value}\r\n`)
        .join('')}` + `Authorization: ${api.auth.Authorization}\r\nConnection: close\r\n\r\n`,
    );
  const statusOf = async (id: string) =>
    ((await api.client.send(new GetCommand({ TableName: api.orders.tableName, Key: { id: BigInt(id) } }))).Item?.status as
      string | undefined) ?? 'missing';
  const codeOf = (response: RawResponse) => (JSON.parse(response.body) as { code: string; status: number }).code;

  describe('answers only its own host names', () => {
    it('refuses a cancel sent with a foreign Host (a rebound web page) with 421 misdirected_request, and cancels nothing', async () => {
      const response = await send('DELETE', '/v1/store/orders/280', `rebind.attacker.example:${port}`);
      expect(response.status, response.raw).toBe(421);
      expect(JSON.parse(response.body)).toEqual({ code: 'misdirected_request', message: expect.any(String), status: 421 });
      expect(response.headers.get('x-request-id')).toBeTruthy();
      expect(await statusOf('280')).toBe('pending');
    });

    it.each([
      ['the attacker name without a port', 'rebind.attacker.example'],
      ['127.0.0.1 without the port (port 80)', '127.0.0.1'],
      ['127.0.0.1 on another port', () => `127.0.0.1:${port + 1}`],
      ['another loopback address', () => `127.0.0.2:${port}`],
      ['a name that merely starts with localhost', () => `localhost.attacker.example:${port}`],
      ['a name ending in an added name without its dot', () => `evilorders.test:${port}`],
      ['a subdomain of a name added without a leading dot', () => `evil.orders.test:${port}`],
      ['garbage', 'not a host'],
    ])('refuses %s with 421', async (_what, host) => {
      const response = await send('GET', '/v1/store/orders', typeof host === 'function' ? host() : host);
      expect(response.status, response.raw).toBe(421);
      expect(codeOf(response)).toBe('misdirected_request');
    });

    it.each([
      ['127.0.0.1 on its port', () => `127.0.0.1:${port}`],
      ['localhost on its port', () => `localhost:${port}`],
      ['[::1] on its port', () => `[::1]:${port}`],
      ['LOCALHOST in capitals', () => `LOCALHOST:${port}`],
      ['an added name, on any port', () => 'orders.test:8443'],
      ['an added name with a leading dot, itself', () => 'tunnel.example'],
      ['a subdomain of an added name with a leading dot', () => `a.b.tunnel.example:${port}`],
    ])('answers %s', async (_what, host) => {
      const response = await send('GET', '/v1/store/orders', host());
      expect(response.status, response.raw).toBe(200);
    });

    it('judges an absolute-form target by its own authority, which stands for Host', async () => {
      expect((await send('GET', `http://rebind.attacker.example:${port}/v1/store/orders`)).status).toBe(421);
      expect((await send('GET', `http://127.0.0.1:${port}/v1/store/orders`, `rebind.attacker.example:${port}`)).status).toBe(200);
    });

    it('refuses the documents it serves without a key to a foreign Host as well', async () => {
      const response = await sendRaw(
        port,
        `GET /v1/openapi.json HTTP/1.1\r\nHost: rebind.attacker.example:${port}\r\nConnection: close\r\n\r\n`,
      );
      expect(response.status).toBe(421);
    });

    it('answers a request with two Host fields 400 bad_request (RFC 9112 §3.2)', async () => {
      const response = await send('GET', '/v1/store/orders', [`127.0.0.1:${port}`, 'rebind.attacker.example']);
      expect(response.status, response.raw).toBe(400);
      expect(codeOf(response)).toBe('bad_request');
    });
  });

  describe('matches paths as API Gateway does', () => {
    it('does not resolve an encoded dot-dot segment: x/%2e%2e/281 names no route, and order 281 stays pending', async () => {
      const response = await send('DELETE', '/v1/store/orders/x/%2e%2e/281');
      expect(response.status, response.raw).toBe(404);
      expect(codeOf(response)).toBe('route_not_found');
      expect(await statusOf('281')).toBe('pending');
    });

    it('does not resolve a plain dot-dot or dot segment either', async () => {
      expect((await send('DELETE', '/v1/store/orders/x/../282')).status).toBe(404);
      expect((await send('DELETE', '/v1/store/./orders/282')).status).toBe(404);
      expect(await statusOf('282')).toBe('pending');
    });

    it('takes a target beginning with // as a path, not as another host: //evil.example/v2/store/orders names no route', async () => {
      const response = await send('GET', '//evil.example/v2/store/orders');
      expect(response.status, response.raw).toBe(404);
      expect(codeOf(response)).toBe('route_not_found');
    });

    it('merges the slashes in front of the path, as API Gateway merges those after the stage', async () => {
      expect((await send('GET', '//v1/store/orders')).status).toBe(200);
      expect((await send('GET', '///v1/store/orders')).status).toBe(200);
    });

    it('ignores a trailing slash, as API Gateway does', async () => {
      expect((await send('GET', '/v1/store/orders/')).status).toBe(200);
      expect((await send('DELETE', '/v1/store/orders/283/')).status).toBe(204);
      expect(await statusOf('283')).toBe('cancelled');
    });

    it('matches no route where the path has an empty segment inside it', async () => {
      expect((await send('GET', '/v1/store//orders')).status).toBe(404);
      expect((await send('DELETE', '/v1/store/orders//284')).status).toBe(404);
      expect(await statusOf('284')).toBe('pending');
    });

    it('hands an encoded dot-dot as the orderId to the function, which refuses it 400 invalid_order_id', async () => {
      const response = await send('DELETE', '/v1/store/orders/%2e%2e');
      expect(response.status, response.raw).toBe(400);
      expect(codeOf(response)).toBe('invalid_order_id');
    });
  });
});
