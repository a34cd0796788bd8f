/**
 * Clients with no key, and the keyed client they must not lock out, as test/http/made-up-keys.test.ts
 * and `npm run flood` (test/perf/flood.ts) send them to a local gateway on 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import { type Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { localStage } from '../../infra/stage-config.ts';

/** A bearer token of the local key form that no key has: what a flood of guesses sends. */
export const madeUpKey = (): string => `${localStage.keyPrefix}${randomBytes(32).toString('base64url')}`;

/**
 * One cancel of an order that does not exist (404 order_not_found: the function's answer) with
 * `key`, over `agent` or a connection of its own; its status (0: no answer) and time.
 */
export const cancelAbsentOrder = (port: number, key: string, agent: Agent | false = false) =>
  new Promise<{ status: number; ms: number }>((resolve) => {
    const started = performance.now();
    const done = (status: number) => resolve({ status, ms: Math.round(performance.now() - started) });
    const req = httpRequest(
      { host: '127.0.0.1', port, method: 'DELETE', path: '/v1/store/orders/404', headers: { Authorization: `Bearer ${key}` }, agent },
      (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
        res.on('error', () => done(0));
      },
    );
    req.on('error', () => done(0));
    req.end();
  });

/**
 * A keyless crowd: `size` sockets from as many addresses of 127.0.0.0/8 (127.0.1.0 on: Linux routes
 * all of it to the loopback interface), each sending a request head a byte a second and no key,
 * reopened when closed, until `stop`.
 */
export const keylessCrowd = (port: number, size: number) => {
  let stopped = false;
  const sockets = new Set<Socket>();
  const member = async (address: string) => {
    while (!stopped) {
      const socket = connect({ port, host: '127.0.0.1', localAddress: address });
      sockets.add(socket);
      socket.on('error', () => undefined);
      const head = `GET /v1/store/orders HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Drip: ${'x'.repeat(200)}`;
      let sent = 0;
      const drip = setInterval(() => socket.write(head[sent++ % head.length]!, () => undefined), 1_000);
      // Not events.once: it would reject on the socket's error (a reset), which only ends this one.
      await new Promise((resolve) => socket.once('close', resolve));
      clearInterval(drip);
      sockets.delete(socket);
    }
  };
  const members = Array.from({ length: size }, (_, i) => member(`127.0.${1 + Math.floor(i / 256)}.${i % 256}`));
  return {
    stop: async () => {
      stopped = true;
      for (const socket of sockets) socket.destroy();
      await Promise.all(members);
    },
  };
};
