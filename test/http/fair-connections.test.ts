import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '../../infra/local/gateway.ts';
import { type ClientBounds } from '../../infra/local/gateway-server.ts';
import { type LambdaHandler } from '../../infra/local/lambda-runtime.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { allowEverything, testFunction, testRoute } from '../lib/gateway-doubles.ts';
import { startTestApi } from '../lib/local-api.ts';
import { sendRaw } from '../lib/raw-http.ts';

// No single key or client address holds more than its share of the local gateway's connections,
// and a body dripped slower than the minimum rate is cut early: the attacks that locked every other
// client out of `npm start` (260 sockets dripping bodies from one key; a `high` key at half its rate
// limit doing the same) rerun, over loopback, against the gateway's real bounds.

/** A client socket from `localAddress`, what it received, and its close. */
const open = async (port: number, localAddress = '127.0.0.1') => {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await once(socket, 'connect');
  return { socket, received: () => received, closed };
};

const head = (port: number, method: string, target: string, key: string, extra: Record<string, string | number> = {}) =>
  `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\n${Object.entries(extra)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

/** A request of `key` whose body (1000 bytes announced) comes one byte every 2 s, as the attack sent it. */
const dripping = async (port: number, key: string, localAddress?: string) => {
  const client = await open(port, localAddress);
  client.socket.write(head(port, 'DELETE', '/v1/store/orders/1', key, { 'Content-Length': 1000 }));
  const drip = setInterval(() => client.socket.write('x', () => undefined), 2_000);
  void client.closed.then(() => clearInterval(drip));
  return client;
};

describe('the local gateway shares its connections fairly', () => {
  const plain = testRoute('plain', 'GET', '/test/plain');
  const cancel = { ...testRoute('cancel', 'DELETE', '/store/orders/{orderId}') };
  const ok = (async () => ({ statusCode: 200, body: '[]' })) as LambdaHandler;
  const start = (bounds: Partial<ClientBounds>) =>
    startGateway({
      port: 0,
      routes: [plain, cancel],
      functions: new Map([
        [plain, testFunction('plain', ok)],
        [cancel, testFunction('cancel', ok)],
      ]),
      // The key is the principal: each bearer token is a key of its own.
      authorizer: testFunction('authorizer', async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => ({
        ...allowEverything,
        principalId: event.authorizationToken,
      })),
      authorizerCacheTtlSeconds: 0,
      clientBounds: bounds,
    });

  describe('per key and against slow bodies', () => {
    let gateway: Gateway;
    beforeAll(async () => {
      gateway = await start({ maxConnections: 16, maxRequestsPerKey: 2, bodyGraceMs: 500, minBodyBytesPerSecond: 1_000 });
    });
    afterAll(() => gateway.close());

    it("refuses a key's request beyond its share with 429 and Retry-After at once, before its body, and answers another key", async () => {
      const held = [await dripping(gateway.port, 'key-a-0123456789'), await dripping(gateway.port, 'key-a-0123456789')];
      await sleep(100);
      const third = await sendRaw(gateway.port, head(gateway.port, 'GET', '/v1/test/plain', 'key-a-0123456789', { Connection: 'close' }));
      expect(third.status, third.raw).toBe(429);
      expect(JSON.parse(third.body)).toMatchObject({ code: 'too_many_requests', status: 429 });
      expect(third.headers.get('retry-after')).toBe('1');
      const other = await sendRaw(gateway.port, head(gateway.port, 'GET', '/v1/test/plain', 'key-b-0123456789', { Connection: 'close' }));
      expect(other.status, other.raw).toBe(200);
      for (const client of held) client.socket.destroy();
    });

    it('cuts a body arriving slower than the minimum rate with 400 bad_request saying so, and ends its connection', async () => {
      const client = await dripping(gateway.port, 'key-c-0123456789');
      await client.closed;
      expect(client.received()).toMatch(/^HTTP\/1\.1 400 /);
      expect(client.received()).toContain('"code":"bad_request"');
      expect(client.received()).toContain('arrived slower than 1000 bytes a second');
    });

    it('takes a body that keeps to the rate', async () => {
      const client = await open(gateway.port);
      client.socket.write(
        head(gateway.port, 'DELETE', '/v1/store/orders/1', 'key-d-0123456789', { 'Content-Length': 4_000, Connection: 'close' }),
      );
      for (let i = 0; i < 4; i++) {
        client.socket.write(Buffer.alloc(1_000, 'x'));
        await sleep(200);
      }
      await client.closed;
      expect(client.received()).toMatch(/^HTTP\/1\.1 200 /);
    });
  });

  describe('per client address, at the cap', () => {
    let gateway: Gateway;
    beforeAll(async () => {
      // Bodies never cut for their rate here: only the cap decides.
      gateway = await start({ maxConnections: 4, maxRequestsPerKey: 4, bodyGraceMs: 60_000, minBodyBytesPerSecond: 1 });
    });
    afterAll(() => gateway.close());

    it('closes a request of the address holding every connection for a newcomer from another address, which is answered', async () => {
      // Another loopback address: Linux routes all of 127.0.0.0/8 to the loopback interface.
      const hogs = await Promise.all(Array.from({ length: 4 }, (_, i) => dripping(gateway.port, `hog-${i}-0123456789`, '127.0.0.2')));
      await sleep(200);
      const honest = await open(gateway.port, '127.0.0.1');
      honest.socket.write(head(gateway.port, 'GET', '/v1/test/plain', 'honest-0123456789', { Connection: 'close' }));
      await honest.closed;
      expect(honest.received()).toMatch(/^HTTP\/1\.1 200 /);
      expect(hogs.filter((client) => client.socket.destroyed || client.socket.readableEnded).length).toBeGreaterThanOrEqual(1);
      for (const client of hogs) client.socket.destroy();
    });

    it("closes a connection that showed no key, whatever its address, before a keyed client's idle one, even one idle longer", async () => {
      // The keyed client: a keep-alive connection whose request was answered, idle since then.
      const honest = await open(gateway.port, '127.0.0.1');
      honest.socket.write(head(gateway.port, 'GET', '/v1/test/plain', 'honest-0123456789'));
      while (!honest.received().startsWith('HTTP/1.1 200 ')) await sleep(20);
      await sleep(200);
      // A crowd from three other addresses, one socket each, sending a head a byte at a time, then a fourth.
      const crowd: Awaited<ReturnType<typeof open>>[] = [];
      for (const address of ['127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6']) {
        const client = await open(gateway.port, address);
        client.socket.write('GET /v1/test/plain HTTP/1.1\r\nHost');
        crowd.push(client);
        await sleep(50);
      }
      await crowd[0]!.closed;
      expect(honest.socket.destroyed).toBe(false);
      const answered = honest.received().length;
      honest.socket.write(head(gateway.port, 'GET', '/v1/test/plain', 'honest-0123456789', { Connection: 'close' }));
      await honest.closed;
      expect(honest.received().slice(answered)).toMatch(/^HTTP\/1\.1 200 /);
      for (const client of crowd) client.socket.destroy();
    });
  });
});

describe('npm start’s gateway, with its own bounds, against the attacks that locked other keys out', () => {
  let api: Awaited<ReturnType<typeof startTestApi>>;
  let port: number;
  let otherKey: string;
  let highKey: string;
  beforeAll(async () => {
    api = await startTestApi([]);
    port = Number(new URL(api.url).port);
    otherKey = (await createApiKey(api.apiKeys, { name: 'other', prefix: 'so_test_', tier: 'standard' })).key;
    highKey = (await createApiKey(api.apiKeys, { name: 'high', prefix: 'so_test_', tier: 'high' })).key;
  });
  afterAll(() => api?.close());

  /** Ten requests of the other key, one after another: each gets an answer (404: no such order), none a closed connection. */
  const otherKeyAnswered = async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const response = await sendRaw(port, head(port, 'DELETE', '/v1/store/orders/404', otherKey, { Connection: 'close' }));
      statuses.push(response.status);
      await sleep(100);
    }
    return statuses;
  };

  /** Keeps `count` dripping sockets of `key` open, reopening each one closed, until stopped. */
  const holdSockets = (key: string, count: number) => {
    let stopped = false;
    const sockets = new Set<Socket>();
    const keepOne = async (): Promise<void> => {
      while (!stopped) {
        const client = await dripping(port, key);
        sockets.add(client.socket);
        await client.closed;
        sockets.delete(client.socket);
      }
    };
    const running = Array.from({ length: count }, () => keepOne());
    return {
      stop: async () => {
        stopped = true;
        for (const socket of sockets) socket.destroy();
        await Promise.all(running);
      },
    };
  };

  it('answers another key while 260 sockets of the developer’s key drip their bodies', async () => {
    const attack = holdSockets(api.key, 260);
    try {
      await sleep(1_000);
      expect(await otherKeyAnswered()).toEqual(Array.from({ length: 10 }, () => 404));
    } finally {
      await attack.stop();
    }
  });

  it('answers another key while a high key opens dripping requests at half its rate limit (25 a second)', async () => {
    const opened: Awaited<ReturnType<typeof dripping>>[] = [];
    let stopped = false;
    // Counted, not timed: 300 requests is more than the cap on connections if each stayed 30 s.
    const attack = (async () => {
      while (!stopped) {
        opened.push(await dripping(port, highKey));
        await sleep(40);
      }
    })();
    try {
      while (opened.length < 300) await sleep(100);
      expect(await otherKeyAnswered()).toEqual(Array.from({ length: 10 }, () => 404));
    } finally {
      stopped = true;
      await attack;
      for (const client of opened) client.socket.destroy();
    }
  });
});
