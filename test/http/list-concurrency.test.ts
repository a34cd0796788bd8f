import { DeleteCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localStage } from '../../infra/stage-config.ts';
import { type Tier } from '../../infra/tiers.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { errorRecord } from '../../shared/errors.ts';
import { order, request, startTestApi } from '../lib/local-api.ts';

// A tier whose rates never refuse within a test, so that only the bound on lists running at once can.
const oneListAtATime: Tier = {
  throttling: { rateLimit: 100, burstLimit: 100 },
  listThrottling: { rateLimit: 100, burstLimit: 100 },
  pagedListThrottling: { rateLimit: 100, burstLimit: 100 },
  dailyQuota: 10_000,
  concurrentLists: 1,
};
const stage = { ...localStage, tiers: { ...localStage.tiers, oneListAtATime } };

type Api = Awaited<ReturnType<typeof startTestApi>>;

describe('the per-key bound on lists running at once (a lease per running list)', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startTestApi([order('1', 'pending'), order('2', 'shipped')], {
      stage,
      limits: { tiers: stage.tiers, defaultTier: localStage.defaultTier },
    });
  });
  afterAll(() => api.close());

  const keyInTier = async () => {
    const { key, item } = await createApiKey(api.apiKeys, { name: 'lists', prefix: 'so_test_', tier: 'oneListAtATime' });
    return { keyId: item.keyId, auth: { Authorization: `Bearer ${key}` } };
  };
  /** The lease a list of this key holds while it runs, as if one were running now (or had been stopped at `expiresAt`). */
  const holdLease = (keyId: string, expiresAt: number) =>
    api.client.send(
      new PutCommand({ TableName: api.listLeases.tableName, Item: { lease: `${keyId}#0`, holder: 'a running list', expiresAt } }),
    );
  const leases = async () => (await api.client.send(new ScanCommand({ TableName: api.listLeases.tableName }))).Items ?? [];
  const inAMinute = () => Math.floor(Date.now() / 1000) + 60;

  it("answers 429 too_many_requests with Retry-After while the key's lists already run, and lists again once one ends", async () => {
    const { keyId, auth } = await keyInTier();
    await holdLease(keyId, inAMinute());
    const refused = await request(api.url, 'GET', '/store/orders', auth);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ ...errorRecord('too_many_requests'), message: expect.stringContaining('already runs 1 lists at once') });
    expect(refused.headers.get('retry-after')).toBe('1');
    // The running list ends: it deletes its lease.
    await api.client.send(new DeleteCommand({ TableName: api.listLeases.tableName, Key: { lease: `${keyId}#0` } }));
    expect((await request(api.url, 'GET', '/store/orders', auth)).status).toBe(200);
  });

  it('takes over the lease of a list stopped without giving it back, once it has expired', async () => {
    const { keyId, auth } = await keyInTier();
    await holdLease(keyId, Math.floor(Date.now() / 1000) - 1);
    expect((await request(api.url, 'GET', '/store/orders', auth)).status).toBe(200);
  });

  it("does not refuse another key's list", async () => {
    const busy = await keyInTier();
    const other = await keyInTier();
    await holdLease(busy.keyId, inAMinute());
    expect((await request(api.url, 'GET', '/store/orders', busy.auth)).status).toBe(429);
    expect((await request(api.url, 'GET', '/store/orders', other.auth)).status).toBe(200);
  });

  it('gives the lease back when the list has been sent, so the same key lists again and again', async () => {
    const { keyId, auth } = await keyInTier();
    for (let i = 0; i < 3; i++) expect((await request(api.url, 'GET', '/store/orders', auth)).status).toBe(200);
    expect((await leases()).filter((lease) => String(lease.lease).startsWith(keyId))).toEqual([]);
  });

  it('gives the lease back when the list is refused after taking it (too large for one answer)', async () => {
    const small = await startTestApi([order('1', 'pending'), order('2', 'pending')], {
      stage,
      limits: { tiers: stage.tiers, defaultTier: localStage.defaultTier },
      environment: { LIST_MAX_ORDERS: '1', LIST_MAX_ORDERS_GZIP: '1' },
    });
    try {
      const { key } = await createApiKey(small.apiKeys, { name: 'lists', prefix: 'so_test_', tier: 'oneListAtATime' });
      const auth = { Authorization: `Bearer ${key}` };
      expect((await request(small.url, 'GET', '/store/orders', auth)).status).toBe(406);
      expect((await request(small.url, 'GET', '/store/orders', auth)).status).toBe(406);
      expect((await small.client.send(new ScanCommand({ TableName: small.listLeases.tableName }))).Items).toEqual([]);
    } finally {
      await small.close();
    }
  });

  it("refuses to start a local stage where one key's lists could take every list slot", async () => {
    const greedy = { ...localStage, listReservedConcurrency: 1 };
    await expect(startTestApi([], { stage: greedy })).rejects.toThrow(/another key's list still has a slot/);
  });

  it("leaves a list slot for another key while one key runs all the lists its tier allows (npm start's own tiers)", async () => {
    const { key: busyKey, item } = await createApiKey(api.apiKeys, { name: 'busy', prefix: 'so_test_', tier: 'standard' });
    const { key: otherKey } = await createApiKey(api.apiKeys, { name: 'other', prefix: 'so_test_', tier: 'standard' });
    // The busy key's list runs (its lease held); the local stage's own tier lets it run no more.
    await holdLease(item.keyId, inAMinute());
    expect((await request(api.url, 'GET', '/store/orders', { Authorization: `Bearer ${busyKey}` })).status).toBe(429);
    expect((await request(api.url, 'GET', '/store/orders', { Authorization: `Bearer ${otherKey}` })).status).toBe(200);
    expect((localStage.tiers.standard as Tier).concurrentLists).toBeLessThan(localStage.listReservedConcurrency);
  });
});
