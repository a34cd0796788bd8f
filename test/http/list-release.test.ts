import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localStage } from '../../infra/stage-config.ts';
import { type Tier } from '../../infra/tiers.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { order, request, startTestApi } from '../lib/local-api.ts';

// Every way a list's client can leave, before and after the first byte: the list's lease and the
// local stage's list slot come back, so the same key (and any other) lists again.

const oneListAtATime: Tier = {
  throttling: { rateLimit: 1000, burstLimit: 1000 },
  listThrottling: { rateLimit: 1000, burstLimit: 1000 },
  pagedListThrottling: { rateLimit: 1000, burstLimit: 1000 },
  dailyQuota: 1_000_000,
  concurrentLists: 1,
};
// One lease for the key (a leak refuses its next list) and the local stage's slots (leaks add up over the tests).
const stage = { ...localStage, tiers: { ...localStage.tiers, oneListAtATime } };
const orders = Array.from({ length: 3_000 }, (_, i) => order(String(1_000_000 + i), 'pending', { petId: String(i), quantity: '1' }));

type Api = Awaited<ReturnType<typeof startTestApi>>;

/** Sends a list request and resets the connection `afterMs` after it was sent (or once the first byte came, for 'first byte'). */
const resetList = async (port: number, auth: string, afterMs: number | 'first byte') => {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.write(`GET /v1/store/orders HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${auth}\r\n\r\n`);
  if (afterMs === 'first byte') await once(socket, 'data');
  else if (afterMs > 0) await sleep(afterMs);
  socket.resetAndDestroy();
};

describe('a list whose client leaves, at any point', () => {
  let api: Api;
  let port: number;
  let auth: string;
  beforeAll(async () => {
    api = await startTestApi(orders, { stage, limits: { tiers: stage.tiers, defaultTier: localStage.defaultTier } });
    port = Number(new URL(api.url).port);
    const { key } = await createApiKey(api.apiKeys, { name: 'lists', prefix: 'so_test_', tier: 'oneListAtATime' });
    auth = `Bearer ${key}`;
  });
  afterAll(() => api?.close());

  const leases = async () => (await api.client.send(new ScanCommand({ TableName: api.listLeases.tableName }))).Items ?? [];

  /**
   * The next list of the same key, as a client that honours Retry-After sends it (docs/operating.md,
   * "Reliability"): right after the reset the left list's function may still run, holding its
   * lease (429) or its slot (503), each refusal an Error record with `Retry-After: 1`; once that
   * function has ended, 200 whole.
   */
  const nextList = async () => {
    for (let attempt = 1; ; attempt++) {
      const response = await request(api.url, 'GET', '/store/orders', { Authorization: auth });
      if (response.status === 200 || attempt === 3) return response;
      expect([429, 503]).toContain(response.status);
      expect(response.headers.get('retry-after')).toBe('1');
      await sleep(1_000);
    }
  };

  for (const afterMs of [0, 1, 2, 4, 8, 15, 30, 'first byte'] as const) {
    it(`gives the slot and the lease back when the client resets ${afterMs === 'first byte' ? 'after the first byte' : `${afterMs} ms after its request`}`, async () => {
      await resetList(port, auth, afterMs);
      const next = await nextList();
      expect(next.status).toBe(200);
      expect((next.body as unknown[]).length).toBe(orders.length);
      expect(await leases()).toEqual([]);
    });
  }
});
