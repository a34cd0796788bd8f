import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '../../infra/local/gateway.ts';
import { type ClientBounds } from '../../infra/local/gateway-server.ts';
import { type LambdaHandler } from '../../infra/local/lambda-runtime.ts';
import { routes } from '../../infra/registry.ts';
import { allowEverything, noContent, testFunction, testRoute } from '../lib/gateway-doubles.ts';
import { type ServiceProcess, startServiceProcess, stopServiceProcess, uniqueTables } from '../lib/service-process.ts';
import { dynamoDbEndpoint } from '../lib/local-api.ts';

// Clients that misbehave on purpose, over raw sockets: the local gateway settles who sends a
// request before it reads any body, and bounds how long and how many connections a client holds.

const key = 'hostile-clients-test-key-0123456789';
const cancel = routes.find((route) => route.operation === 'cancelOrder')!;
/** A buffered GET route of the test's own (the real list streams). */
const plain = testRoute('plain', 'GET', '/test/plain');

/** A client socket and everything it has received, with a promise of its close. */
const open = async (port: number) => {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined); // a server that closes on a client still sending resets it
  // Not events.once: it would reject on the socket's 'error' (a reset), and a reset is a close here.
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await once(socket, 'connect');
  return { socket, received: () => received, closed };
};

/** Resolves once `predicate` holds of what the socket received, or throws when the socket closes first. */
const receivedUntil = async (client: Awaited<ReturnType<typeof open>>, predicate: (text: string) => boolean) => {
  let closed = false;
  void client.closed.then(() => (closed = true));
  while (!predicate(client.received())) {
    if (closed) throw new Error(`closed before the expected answer; received:\n${client.received()}`);
    await sleep(20);
  }
};

/** A request head addressed to the gateway on `port` (the port is part of the Host it answers for). */
const head = (port: number, method: string, target: string, headers: Record<string, string | number>) =>
  `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

describe('the local gateway against clients that send bodies without a key', () => {
  let gateway: Gateway;
  let authorizerCalls = 0;
  beforeAll(async () => {
    // A function that reads nothing: what counts here is what the gateway reads.
    gateway = await startGateway({
      port: 0,
      routes: [cancel],
      functions: new Map([[cancel, testFunction('cancel', noContent)]]),
      authorizer: testFunction('authorizer', async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
        authorizerCalls++;
        if (event.authorizationToken !== `Bearer ${key}`) throw new Error('Unauthorized');
        return allowEverything;
      }),
      authorizerCacheTtlSeconds: 0,
    });
  });
  afterAll(() => gateway.close());

  it('answers a request without a key 401 at once, without 100 Continue, and ends the connection instead of waiting for its body', async () => {
    const client = await open(gateway.port);
    client.socket.write(
      head(client.socket.remotePort!, 'DELETE', '/v1/store/orders/1', { 'Content-Length': 10 * 1024 * 1024 - 1, Expect: '100-continue' }),
    );
    await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(client.received()).toContain('"code":"unauthorized"');
    expect(client.received()).not.toContain('100 Continue');
  });

  it('answers a key refused by the authorizer 401 before the body, even one being sent without waiting for 100 Continue', async () => {
    const calls = authorizerCalls;
    const client = await open(gateway.port);
    client.socket.write(
      head(client.socket.remotePort!, 'DELETE', '/v1/store/orders/1', {
        'Content-Length': 9 * 1024 * 1024,
        Authorization: 'Bearer wrong-key-0123456789',
      }),
    );
    client.socket.write(Buffer.alloc(64 * 1024), () => undefined); // then it stalls
    await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(client.received()).toContain('"code":"unauthorized"');
    expect(authorizerCalls).toBe(calls + 1);
  });

  it('sends 100 Continue for an accepted key, then reads the body and answers', async () => {
    const client = await open(gateway.port);
    client.socket.write(
      head(client.socket.remotePort!, 'DELETE', '/v1/store/orders/1', {
        'Content-Length': 4,
        Expect: '100-continue',
        Authorization: `Bearer ${key}`,
      }),
    );
    await receivedUntil(client, (text) => text.includes('100 Continue\r\n\r\n'));
    client.socket.write('body');
    await receivedUntil(client, (text) => text.includes('204 No Content'));
    expect(client.received()).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 204 /);
    client.socket.destroy();
  });
});

describe('the local gateway bounds what a client holds', () => {
  // The bounds shortened, so that each is seen to act within a test; npm start runs with clientBounds.
  // No key share and a body rate any drip keeps: these tests are about the timeouts and the cap (test/http/fair-connections.test.ts has the rest).
  const bounds: ClientBounds = {
    headersTimeoutMs: 1_000,
    requestTimeoutMs: 2_000,
    idleTimeoutMs: 1_000,
    maxConnections: 4,
    maxRequestsPerKey: 4,
    minBodyBytesPerSecond: 1,
    bodyGraceMs: 1_000,
  };
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startGateway({
      port: 0,
      routes: [plain],
      functions: new Map([[plain, testFunction('plain', (async () => ({ statusCode: 200, body: '[]' })) as LambdaHandler)]]),
      authorizer: testFunction('authorizer', async () => allowEverything),
      authorizerCacheTtlSeconds: 0,
      clientBounds: bounds,
    });
  });
  afterAll(() => gateway.close());

  it('closes a connection whose headers never end (header timeout)', async () => {
    const client = await open(gateway.port);
    client.socket.write(`GET /v1/test/plain HTTP/1.1\r\nHost: 127.0.0.1:${gateway.port}\r\n`);
    await client.closed;
  });

  it('closes an upload dripping a byte at a time with an accepted key (request timeout)', async () => {
    const client = await open(gateway.port);
    client.socket.write(
      head(client.socket.remotePort!, 'GET', '/v1/test/plain', { 'Content-Length': 1000, Authorization: `Bearer ${key}` }),
    );
    const drip = setInterval(() => client.socket.write('x'), 200);
    try {
      await client.closed;
    } finally {
      clearInterval(drip);
    }
    expect(client.received()).not.toContain('200 OK');
  });

  it('closes a keep-alive connection left idle after its answer (idle timeout)', async () => {
    const client = await open(gateway.port);
    client.socket.write(head(client.socket.remotePort!, 'GET', '/v1/test/plain', { Authorization: `Bearer ${key}` }));
    await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(client.received()).toContain('Keep-Alive: timeout=1');
  });

  it('at its connection limit, closes the connection whose head has been incomplete the longest, not the newcomer', async () => {
    const held = [];
    // Connections holding partial heads, opened one after another: the first is the oldest.
    for (let i = 0; i < bounds.maxConnections; i++) {
      const client = await open(gateway.port);
      client.socket.write('G');
      held.push(client);
      await sleep(20);
    }
    const honest = await open(gateway.port);
    honest.socket.write(head(honest.socket.remotePort!, 'GET', '/v1/test/plain', { Authorization: `Bearer ${key}`, Connection: 'close' }));
    await honest.closed;
    expect(honest.received()).toMatch(/^HTTP\/1\.1 200 /);
    // The oldest partial head made room; the others are still open (until their header timeout).
    await held[0]!.closed;
    expect(held[0]!.received()).toBe('');
    expect(held.slice(1).map((client) => client.socket.destroyed)).toEqual(held.slice(1).map(() => false));
    for (const client of held) client.socket.destroy();
  });

  it('keeps answering honest clients while a client reopens partial heads as fast as they are dropped', async () => {
    let stop = false;
    const flood = async () => {
      while (!stop) {
        const client = await open(gateway.port);
        client.socket.write('GET /v1/test/plain HTTP/1.1\r\n');
        await client.closed;
      }
    };
    const flooders = Array.from({ length: bounds.maxConnections + 2 }, () => flood());
    await sleep(200);
    try {
      for (let i = 0; i < 5; i++) {
        const honest = await open(gateway.port);
        honest.socket.write(
          head(honest.socket.remotePort!, 'GET', '/v1/test/plain', { Authorization: `Bearer ${key}`, Connection: 'close' }),
        );
        await honest.closed;
        expect(honest.received()).toMatch(/^HTTP\/1\.1 200 /);
      }
    } finally {
      stop = true;
      await Promise.all(flooders);
    }
  });

  it('closes the newcomer when every connection has a request under way', async () => {
    // Requests whose body never comes: under way (their heads are whole) until the request timeout.
    const busy = await Promise.all(Array.from({ length: bounds.maxConnections }, () => open(gateway.port)));
    for (const client of busy)
      client.socket.write(
        head(client.socket.remotePort!, 'GET', '/v1/test/plain', { Authorization: `Bearer ${key}`, 'Content-Length': 10 }),
      );
    await sleep(200);
    const refused = await open(gateway.port);
    await refused.closed;
    expect(refused.received()).toBe('');
    expect(busy.map((client) => client.socket.destroyed)).toEqual(busy.map(() => false));
    for (const client of busy) client.socket.destroy();
    await Promise.all(busy.map((client) => client.closed));
  });
});

/** The resident memory of a process (Linux /proc), in MB. */
const residentMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

describe('npm start against many clients sending large bodies without a key', () => {
  let service: ServiceProcess;
  beforeAll(async () => {
    service = await startServiceProcess('node', { DYNAMODB_ENDPOINT: dynamoDbEndpoint(), STORE_API_KEY: key, ...uniqueTables('hostile') });
    expect(service.url, service.output()).toBeDefined();
  });
  afterAll(() => stopServiceProcess(service));

  /**
   * Resolves once every client's connection has closed. No bound of its own: a gateway that kept
   * them open would fail the test at its timeout (the hang bound, vitest.config.ts), while a fixed
   * 20 s here failed under two suites at once with answers still on their way (issue 20, finding 7).
   */
  const allClosed = (clients: readonly Awaited<ReturnType<typeof open>>[]) => Promise.all(clients.map((client) => client.closed));

  it('answers them 401 without buffering their bodies: its memory stays near its baseline, during and after', async () => {
    const port = Number(new URL(service.url!).port);
    const pid = service.child.pid!;
    // The baseline after the same refusals without bodies, so that it counts what the bodies add.
    const warmUp = await Promise.all(Array.from({ length: 40 }, () => open(port)));
    for (const client of warmUp)
      client.socket.write(head(client.socket.remotePort!, 'DELETE', '/v1/store/orders/1', { Connection: 'close' }));
    await allClosed(warmUp);
    const baseline = residentMb(pid);
    const megabyte = Buffer.alloc(1024 * 1024, 'x');
    // 40 clients each announcing 10 MiB and sending 9 before stalling (MBs 125 → 481 before issue 20, for good).
    const clients = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const client = await open(port);
        client.socket.write(head(client.socket.remotePort!, 'DELETE', '/v1/store/orders/1', { 'Content-Length': 10 * 1024 * 1024 }));
        for (let i = 0; i < 9 && !client.socket.destroyed; i++) client.socket.write(megabyte, () => undefined);
        return client;
      }),
    );
    await allClosed(clients);
    const during = residentMb(pid);
    for (const client of clients) client.socket.destroy();
    expect(clients.map((client) => client.received().split('\r\n')[0]).filter((line) => !line?.startsWith('HTTP/1.1 401 '))).toEqual([]);
    // Buffered, the bodies would hold 360 MB. Discarded, they still pass through the process as
    // garbage V8 frees later: 82–87 MB measured on a quiet machine, 100.5 once on a loaded one. The
    // bound is half of what buffering would hold, so any design keeping even half the bodies fails.
    const bufferedMb = clients.length * 9;
    expect(during - baseline).toBeLessThan(bufferedMb / 2);
    expect(residentMb(pid) - baseline).toBeLessThan(bufferedMb / 2);
  });

  it('answers uploads dripping a byte at a time without a key 401 and ends them, instead of keeping them open', async () => {
    const port = Number(new URL(service.url!).port);
    const clients = await Promise.all(Array.from({ length: 100 }, () => open(port)));
    for (const client of clients)
      client.socket.write(head(client.socket.remotePort!, 'DELETE', '/v1/store/orders/1', { 'Content-Length': 1000 }));
    const drip = setInterval(() => {
      for (const client of clients) if (!client.socket.destroyed) client.socket.write('x', () => undefined);
    }, 500);
    try {
      await allClosed(clients);
    } finally {
      clearInterval(drip);
    }
    expect(clients.filter((client) => !client.socket.destroyed).length).toBe(0);
    expect(clients.every((client) => client.received().startsWith('HTTP/1.1 401 '))).toBe(true);
  });
});
