import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../infra/ops/keys.ts';
import type { LocalLimits } from '../../infra/local/rate-limits.ts';
import { localStage } from '../../infra/stage-config.ts';
import { type Tier } from '../../infra/tiers.ts';
import { hashApiKey, keyIdOf, secondsUntilQuotaReset } from '../../functions/authorizer/api-keys.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { errorRecord } from '../../shared/errors.ts';
import { dynamoDbEndpoint, order, request, startTestApi } from '../lib/local-api.ts';

// Tiers small enough to reach in a few requests; the rates refill nothing within a test.
const slow = 0.001;
const tiny: Tier = {
  throttling: { rateLimit: slow, burstLimit: 3 },
  listThrottling: { rateLimit: slow, burstLimit: 1 },
  pagedListThrottling: { rateLimit: slow, burstLimit: 1 },
  dailyQuota: 1000,
  concurrentLists: 1,
};
const twoADay: Tier = {
  throttling: { rateLimit: 100, burstLimit: 100 },
  listThrottling: { rateLimit: 100, burstLimit: 100 },
  pagedListThrottling: { rateLimit: 100, burstLimit: 100 },
  dailyQuota: 2,
  concurrentLists: 1,
};
const limits: LocalLimits = { tiers: { ...localStage.tiers, tiny, twoADay }, defaultTier: 'tiny' };

type Api = Awaited<ReturnType<typeof startTestApi>>;
const keyIn = async (api: Api, tier: string | undefined) => {
  const { key, item } = await createApiKey(api.apiKeys, {
    name: `in ${tier}`,
    prefix: 'so_test_',
    ...(tier === undefined ? {} : { tier }),
  });
  return { keyId: item.keyId, auth: { Authorization: `Bearer ${key}` } };
};
const list = (api: Api, auth: Record<string, string>) => request(api.url, 'GET', '/store/orders', auth);
const cancel = (api: Api, auth: Record<string, string>, id = '404') => request(api.url, 'DELETE', `/store/orders/${id}`, auth);

const expectLimited = (response: Awaited<ReturnType<typeof request>>, retryAfter = '1') => {
  expect(response.status).toBe(429);
  expect(response.body).toEqual(errorRecord('too_many_requests'));
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(response.headers.get('retry-after')).toBe(retryAfter);
  expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
};

describe('per-key limits through the local gateway', () => {
  let api: Api;
  beforeAll(async () => {
    // The authorizer cache off: each request reads the key's record, its tier included.
    api = await startTestApi([order('1', 'pending')], { limits, stage: { ...localStage, authorizerCacheTtlSeconds: 0 } });
  });
  afterAll(() => api.close());

  it("answers 429 with Retry-After and the Error record once a key's burst is spent, while another key of the same tier goes on", async () => {
    const first = await keyIn(api, 'tiny');
    const second = await keyIn(api, 'tiny');
    for (let i = 0; i < tiny.throttling.burstLimit; i++) expect((await cancel(api, first.auth)).status).toBe(404);
    expectLimited(await cancel(api, first.auth));
    expectLimited(await list(api, first.auth));
    // Another key's bucket is its own; the developer's key is unlimited.
    expect((await cancel(api, second.auth)).status).toBe(404);
    expect((await list(api, second.auth)).status).toBe(200);
    for (let i = 0; i < 10; i++) expect((await cancel(api, api.auth)).status).toBe(404);
  });

  it("limits the list on its own, below the key's overall limit", async () => {
    const { auth } = await keyIn(api, 'tiny');
    expect((await list(api, auth)).status).toBe(200);
    expectLimited(await list(api, auth));
    // The key's overall bucket still has tokens for cancels.
    expect((await cancel(api, auth)).status).toBe(404);
  });

  it("answers 429 with a Retry-After counting to the quota's reset at 00:00 UTC once the daily quota is used, as QUOTA_EXCEEDED does", async () => {
    const { auth } = await keyIn(api, 'twoADay');
    expect((await cancel(api, auth)).status).toBe(404);
    expect((await list(api, auth)).status).toBe(200);
    const before = secondsUntilQuotaReset();
    const refused = await cancel(api, auth);
    const after = secondsUntilQuotaReset();
    expect(refused.status).toBe(429);
    // Counted by the authorizer as it allowed the key (just now: the cache is off here), not a fixed hour.
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(Math.min(before, after));
    expect(retryAfter).toBeLessThanOrEqual(Math.max(before, after));
    expectLimited(refused, String(retryAfter));
  });

  it("gives a key whose record names no tier (issued before tiers) the default tier's limits", async () => {
    const { auth } = await keyIn(api, undefined);
    for (let i = 0; i < tiny.throttling.burstLimit; i++) expect((await cancel(api, auth)).status).toBe(404);
    expectLimited(await cancel(api, auth));
  });

  it("gives a key whose record names a tier not defined here, even one named like an Object property, the default tier's limits", async () => {
    const { auth } = await keyIn(api, 'constructor');
    for (let i = 0; i < tiny.throttling.burstLimit; i++) expect((await cancel(api, auth)).status).toBe(404);
    expectLimited(await cancel(api, auth));
  });

  it('refuses a key with no usage identifier (issued before usage plans) with 401, as API Gateway does (INVALID_API_KEY)', async () => {
    const key = 'so_test_issued-before-usage-plans-00000000';
    const keyHash = hashApiKey(key);
    await api.apiKeys.client.send(
      new PutCommand({
        TableName: api.apiKeys.tableName,
        Item: { keyHash, keyId: keyIdOf(keyHash), name: 'old', createdAt: '2026-01-01T00:00:00Z' },
      }),
    );
    const response = await list(api, { Authorization: `Bearer ${key}` });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorRecord('unauthorized'));
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('gives a key moved with `npm run keys -- move` its new limits at its next authorization', async () => {
    const { keyId, auth } = await keyIn(api, 'tiny');
    for (let i = 0; i < tiny.throttling.burstLimit; i++) await cancel(api, auth);
    expectLimited(await cancel(api, auth));
    await run(['move', keyId, '--tier', 'unlimited', '--endpoint', dynamoDbEndpoint(), '--table', api.apiKeys.tableName], () => undefined, {
      note: () => undefined,
    });
    for (let i = 0; i < 10; i++) expect((await cancel(api, auth)).status).toBe(404);
  });
});

describe('a move while the authorizer cache holds the key', () => {
  it('takes effect only when the cached Allow (which carries the tier) expires', async () => {
    const api = await startTestApi([], { limits, stage: { ...localStage, authorizerCacheTtlSeconds: 300 } });
    try {
      const { keyId, auth } = await keyIn(api, 'tiny');
      for (let i = 0; i < tiny.throttling.burstLimit; i++) await cancel(api, auth);
      await run(
        ['move', keyId, '--tier', 'unlimited', '--endpoint', dynamoDbEndpoint(), '--table', api.apiKeys.tableName],
        () => undefined,
        {
          note: () => undefined,
        },
      );
      expectLimited(await cancel(api, auth));
    } finally {
      await api.close();
    }
  });
});
