/**
 * What clients with no key do to `npm start`'s gateway (its real bounds, authorizer and DynamoDB
 * Local): a flood of made-up keys from one address, and a keyless crowd from many. A client with a
 * key must still be answered. Counts and statuses only: the time figures are test/perf/flood.ts's.
 */
import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { localStage } from '../../infra/stage-config.ts';
import { cancelAbsentOrder, keylessCrowd, madeUpKey } from '../lib/keyless-clients.ts';
import { order, startTestApi } from '../lib/local-api.ts';

/** The status of one cancel of an order that does not exist, over `agent` or a connection of its own. */
const cancel = async (port: number, key: string, options: { agent?: Agent } = {}) =>
  (await cancelAbsentOrder(port, key, options.agent)).status;

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
    const crowd = keylessCrowd(port, 300);
    try {
      await sleep(1_500);
      const answered: number[] = [];
      for (let round = 0; round < 3; round++)
        answered.push(...(await Promise.all(Array.from({ length: 10 }, () => cancel(port, api.key, { agent: keyed })))));
      expect(answered.filter((status) => status === 404).length).toBeGreaterThanOrEqual(27);
    } finally {
      await crowd.stop();
      keyed.destroy();
    }
  });
});
