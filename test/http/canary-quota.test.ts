/**
 * What the synthetic client's runs cost its key's daily quota, on the wire: the smoke check as the
 * canary runs it (its own probe order, the filtered page) against the local gateway, every request
 * it sends counted by the key it carries. The count backs `keyedRequestsPerRun`, from which
 * test/unit/canary-quota.test.ts sizes the tier. And a key whose quota is spent fails the run.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { keyedRequestsPerRun, smoke, type SmokeOptions } from '../../functions/canary/smoke-check.ts';
import { loadSuites } from '../../infra/registry.ts';
import type { LocalLimits } from '../../infra/local/rate-limits.ts';
import { localStage, stages } from '../../infra/stage-config.ts';
import type { Tier } from '../../infra/tiers.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { probeSlots } from '../../shared/probes.ts';
import { dynamoDbEndpoint, order, startTestApi } from '../lib/local-api.ts';

/** A canary tier whose quota is spent after `dailyQuota` requests; nothing else limits it. */
const spentSoon: Tier = {
  throttling: { rateLimit: 100, burstLimit: 100 },
  listThrottling: { rateLimit: 100, burstLimit: 100 },
  pagedListThrottling: { rateLimit: 100, burstLimit: 100 },
  dailyQuota: 3,
  concurrentLists: 2,
};
/** The canary tier's quota and slots without its rates: every request of a right run is sent once, none retried after a 429. */
const canaryUnthrottled: Tier = { ...spentSoon, dailyQuota: stages.production.tiers.canary.dailyQuota };
const limits: LocalLimits = { tiers: { ...localStage.tiers, canaryUnthrottled, spentSoon }, defaultTier: localStage.defaultTier };

const suites = await loadSuites();

describe("the synthetic client's requests with its key", () => {
  let api: Awaited<ReturnType<typeof startTestApi>>;
  const dynamoDb = new DynamoDBClient({ endpoint: dynamoDbEndpoint(), region: 'us-east-1' });
  beforeAll(async () => {
    api = await startTestApi([order('1', 'pending'), order('2', 'delivered'), order('3', 'pending')], {
      limits,
      stage: { ...localStage, authorizerCacheTtlSeconds: 0 },
    });
  });
  afterAll(async () => {
    await api?.close();
    dynamoDb.destroy();
  });
  afterEach(() => vi.restoreAllMocks());

  const run = async (tier: string) => {
    const { key } = await createApiKey(api.apiKeys, { name: tier, prefix: 'so_test_', tier });
    const options: SmokeOptions = {
      baseUrl: api.url,
      key,
      timeoutMs: 10_000,
      statusFilter: true,
      probeOrders: {
        client: dynamoDb,
        tableName: api.orders.tableName,
        by: 'synthetic client',
        slots: probeSlots.syntheticClient,
        lifetimeSeconds: 55,
        signal: () => AbortSignal.timeout(30_000),
      },
    };
    // Every request passes through to the real fetch; only the key it carries is noted.
    const realFetch = globalThis.fetch;
    const sent: boolean[] = [];
    vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
      sent.push(new Headers(init?.headers).get('authorization') === `Bearer ${key}`);
      return realFetch(input, init);
    });
    const lines: string[] = [];
    const { failed, busy } = await smoke(options, suites, (line) => lines.push(line));
    const outcome = { failed, busy };
    return { options, outcome, lines, keyed: sent.filter(Boolean).length };
  };

  it('sends as many as keyedRequestsPerRun says a right run sends', async () => {
    const { options, outcome, lines, keyed } = await run('canaryUnthrottled');
    expect(outcome, lines.join('\n')).toEqual({ failed: 0, busy: 0 });
    expect(keyed).toBe(keyedRequestsPerRun(options, suites).right);
  });

  it('fails the run, naming the quota, once the key’s daily quota is spent: not busy until midnight', async () => {
    const { outcome, lines } = await run('spentSoon');
    expect(outcome.busy).toBe(0);
    expect(outcome.failed).toBeGreaterThan(0);
    expect(lines.join('\n')).toMatch(/^FAIL {2}.*: 429, Retry-After \d+: the key's daily quota is spent/m);
  });
});
