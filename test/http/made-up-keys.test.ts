/**
 * What clients with no key do to `npm start`'s gateway (its real bounds, authorizer and DynamoDB
 * Local): a flood of made-up keys from one address, and a keyless crowd from many. A client with a
 * key must still be answered. Counts and statuses only: the time figures are test/perf/flood.ts's.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { localStage } from '../../infra/stage-config.ts';
import { order, startTestApi } from '../lib/local-api.ts';

/**
 * One cancel of an order that does not exist (404 order_not_found: an answer from the function,
 * which the list's two slots would not give ten requests at once) over `agent`, or a connection of
 * its own; its status (0: no answer).
 */
const cancel = (port: number, key: string, options: { agent?: Agent; localAddress?: string } = {}) =>
  new Promise<number>((resolve) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'DELETE',
        path: '/v1/store/orders/404',
        headers: { Authorization: `Bearer ${key}` },
        agent: options.agent ?? false,
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      },
    );
    req.on('error', () => resolve(0));
    req.end();
  });

const madeUpKey = () => `${localStage.keyPrefix}${randomBytes(32).toString('base64url')}`;

describe('npm start’s gateway against clients with no key', () => {
  let api: Awaited<ReturnType<typeof startTestApi>>;
  let port: number;
  beforeAll(async () => {
    api = await startTestApi([order('1', 'pending')]);
    port = Number(new URL(api.url).port);
  });
  afterAll(() => api?.close());

  it('answers a key minted during a flood of made-up keys on 64 keep-alive connections, and refuses the flood 401 or 429, never 500', async () => {
    const flood = new Agent({ keepAlive: true, maxSockets: 64 });
    const statuses = new Map<number, number>();
    let stopped = false;
    const workers = Array.from({ length: 64 }, async () => {
      while (!stopped) {
        const status = await cancel(port, madeUpKey(), { agent: flood });
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    });
    try {
      await sleep(1_000);
      const fresh: number[] = [];
      for (let trial = 0; trial < 3; trial++) {
        const { key } = await createApiKey(api.apiKeys, { name: `fresh ${trial}`, prefix: localStage.keyPrefix, tier: 'standard' });
        fresh.push(await cancel(port, key));
        await sleep(300);
      }
      expect(fresh).toEqual([404, 404, 404]);
    } finally {
      stopped = true;
      await Promise.all(workers);
      flood.destroy();
    }
    // Refused by the authorizer (401) or, past the address's turns, by the gateway's firewall (429); nothing else.
    expect([...statuses.keys()].filter((status) => status !== 401 && status !== 429)).toEqual([]);
    expect(statuses.get(401)).toBeGreaterThan(0);
  });

  it('answers a keyed client 27 times in 30 or more while a keyless crowd from 300 addresses drips heads at the connection cap', async () => {
    const keyed = new Agent({ keepAlive: true, maxSockets: 10 });
    let stopped = false;
    const sockets = new Set<Socket>();
    /** A socket from `address` sending a head a byte a second and no key, reopened when closed. */
    const crowdMember = async (address: string) => {
      while (!stopped) {
        const socket = connect({ port, host: '127.0.0.1', localAddress: address });
        sockets.add(socket);
        socket.on('error', () => undefined);
        const head = `GET /v1/store/orders HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Drip: ${'x'.repeat(200)}`;
        let sent = 0;
        const drip = setInterval(() => socket.write(head[sent++ % head.length]!, () => undefined), 1_000);
        await new Promise((resolve) => socket.once('close', resolve));
        clearInterval(drip);
        sockets.delete(socket);
      }
    };
    // 127.0.1.0 to 127.0.2.43: Linux routes all of 127.0.0.0/8 to the loopback interface.
    const crowd = Array.from({ length: 300 }, (_, i) => crowdMember(`127.0.${1 + Math.floor(i / 256)}.${i % 256}`));
    try {
      await sleep(1_500);
      const answered: number[] = [];
      for (let round = 0; round < 3; round++)
        answered.push(...(await Promise.all(Array.from({ length: 10 }, () => cancel(port, api.key, { agent: keyed })))));
      expect(answered.filter((status) => status === 404).length).toBeGreaterThanOrEqual(27);
    } finally {
      stopped = true;
      for (const socket of sockets) socket.destroy();
      await Promise.all(crowd);
      keyed.destroy();
    }
  });
});
