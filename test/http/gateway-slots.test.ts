import { once } from 'node:events';
import { connect } from 'node:net';
import type { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '../../infra/local/gateway.ts';
import { type LambdaHandler } from '../../infra/local/lambda-runtime.ts';
import type { Route } from '../../shared/routes.ts';
import { allowEverything, testFunction, testRoute } from '../lib/gateway-doubles.ts';
import { sendRaw } from '../lib/raw-http.ts';

// A function runs on after its client has left (a list gives its lease back, a Scan page is still
// on its way): Lambda holds its unit of reserved concurrency until it returns, and so does the
// local gateway, so that clients that reset their lists cannot run more of them at once than the
// stage allows.

const streamed: Route = { ...testRoute('held', 'GET', '/test/held'), streaming: true };

/** A streaming function that starts its answer, then runs until the test lets it end, whatever its client does. */
const heldFunction = () => {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const started: (() => void)[] = [];
  const clientGone: (() => void)[] = [];
  let invocations = 0;
  const handler = Object.assign(
    async (_event: unknown, stream: Writable) => {
      invocations++;
      stream.on('close', () => clientGone.shift()?.());
      started.shift()?.();
      await released;
      if (!stream.destroyed) stream.end('[]');
    },
    { [Symbol.for('aws.lambda.runtime.handler.streaming')]: 'response' },
  ) as unknown as LambdaHandler;
  return {
    handler,
    release: () => release(),
    invocations: () => invocations,
    /** Resolves when the next invocation has started. */
    nextStart: () => new Promise<void>((resolve) => started.push(resolve)),
    /** Resolves when the next invocation's response stream has closed (its client gone). */
    nextClientGone: () => new Promise<void>((resolve) => clientGone.push(resolve)),
  };
};

describe('the local gateway holds a function slot until the invocation ends, not until its client leaves', () => {
  const held = heldFunction();
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startGateway({
      port: 0,
      routes: [streamed],
      functions: new Map([[streamed, { ...testFunction('held', held.handler), reservedConcurrency: 1 }]]),
      authorizer: testFunction('authorizer', async () => allowEverything),
      authorizerCacheTtlSeconds: 0,
    });
  });
  afterAll(() => gateway.close());

  const request = () =>
    sendRaw(
      gateway.port,
      `GET /v1/test/held HTTP/1.1\r\nHost: 127.0.0.1:${gateway.port}\r\nAuthorization: Bearer x-0123456789abcdef\r\n\r\n`,
    );

  it('refuses the next invocation while the function of a client that reset still runs, and takes it once that function ends', async () => {
    const started = held.nextStart();
    const gone = held.nextClientGone();
    const socket = connect(gateway.port, '127.0.0.1');
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    socket.write(`GET /v1/test/held HTTP/1.1\r\nHost: 127.0.0.1:${gateway.port}\r\nAuthorization: Bearer x-0123456789abcdef\r\n\r\n`);
    await started;
    socket.resetAndDestroy();
    // The gateway has seen the client leave: its function runs on, holding the only slot.
    await gone;

    const refused = await request();
    expect(refused.status, refused.raw).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'service_unavailable' });
    expect(held.invocations()).toBe(1);

    held.release();
    // The left invocation returns within a turn of the event loop; the next request may race it once.
    let next = await request();
    if (next.status === 503) next = await request();
    expect(next.status, next.raw).toBe(200);
    expect(held.invocations()).toBe(2);
  });
});
