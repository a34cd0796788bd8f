import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { authorizationPatternFor, canBeStageKey } from '../../functions/authorizer/api-keys.ts';
import { generateApiKey } from '../../infra/ops/key-store.ts';
import { localStage, stages } from '../../infra/stage-config.ts';

describe("a stage's key form", () => {
  it.each(Object.values(stages))('lets through to $stage’s authorizer exactly the keys its key tool issues', (config) => {
    const pattern = authorizationPatternFor(config);
    const issued = generateApiKey(config.keyPrefix);
    expect(pattern.test(`Bearer ${issued}`)).toBe(true);
    expect(canBeStageKey(issued, config.keyPrefix)).toBe(true);
    const other = Object.values(stages).find((candidate) => candidate.keyPrefix !== config.keyPrefix)!;
    const refused = [
      generateApiKey(other.keyPrefix), // the other stage's key
      generateApiKey(localStage.keyPrefix),
      issued.slice(0, -1), // one character short
      `${issued}A`, // one too many
      `${config.keyPrefix}${'a'.repeat(42)}.`, // a bearer character no issued key holds
      `${config.keyPrefix}${'a'.repeat(42)}=`,
    ];
    for (const token of refused) {
      expect([token, pattern.test(`Bearer ${token}`)]).toEqual([token, false]);
      expect([token, canBeStageKey(token, config.keyPrefix)]).toEqual([token, false]);
    }
  });

  it('lets the local run take any bearer token, as its STORE_API_KEY may be one of the developer’s choosing', () => {
    expect(authorizationPatternFor(localStage).test('Bearer my-own-key-1234567890')).toBe(true);
    expect(canBeStageKey('my-own-key-1234567890', undefined)).toBe(true);
  });
});

describe('what a refused key costs in logs', () => {
  let written: string[];
  beforeEach(() => {
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    vi.stubEnv('POWERTOOLS_SERVICE_NAME', 'store-orders-test');
    // Logger and Metrics read those switches when their module is first evaluated.
    vi.resetModules();
    written = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  const lines = () =>
    written
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const call = { operation: 'GetItem', table: 'keys', ms: 3, attempts: 1, throttled: 0 };

  it('is one metrics line a refusal, a log line per cause a minute with the count since the last, and the lookups’ metrics per hundred', async () => {
    const { flushDueRefusals, recordRefusal } = await import('../../functions/authorizer/refusals.ts');
    // CloudWatch takes EMF timestamps up to 14 days old: a fixed date would age out of Powertools' check.
    const start = Date.now() - 3_600_000;
    for (let i = 0; i < 250; i++)
      recordRefusal({ reason: 'unknown_or_revoked_key', operation: 'listOrders', calls: [call] }, start + i * 100, start + i * 100 + 5);
    recordRefusal({ reason: 'not_a_key_of_this_stage', operation: 'listOrders', calls: [] }, start + 200, start + 205);

    const metrics = lines().filter((line) => Array.isArray((line._aws as { CloudWatchMetrics?: unknown })?.CloudWatchMetrics));
    const refusalLines = metrics.filter((line) => line.Refusals === 1);
    // Each refusal: AuthFailures under [service], Refusals under [service, function] and [service, function, version], dated at its invocation.
    expect(refusalLines).toHaveLength(251);
    expect(refusalLines[0]).toMatchObject({
      _aws: {
        Timestamp: start,
        CloudWatchMetrics: [
          { Namespace: 'StoreOrders', Dimensions: [['service']], Metrics: [{ Name: 'AuthFailures', Unit: 'Count' }] },
          {
            Namespace: 'StoreOrders',
            Dimensions: [
              ['service', 'function'],
              ['service', 'function', 'version'],
            ],
            Metrics: [{ Name: 'Refusals', Unit: 'Count' }],
          },
        ],
      },
      service: 'store-orders-test',
      function: 'authorizer',
      version: '$LATEST',
      AuthFailures: 1,
    });
    // 250 lookups: two lines of a hundred lookup times each so far.
    const lookups = metrics.filter((line) => 'DynamoDbLatency' in line);
    expect(lookups.map((line) => (line.DynamoDbLatency as number[]).length)).toEqual([100, 100]);
    // The first refusal of each cause is logged at once; the rest of the minute is counted.
    const logged = () => lines().filter((line) => line.message === 'authorization refused');
    expect(logged().map(({ reason, refusals }) => ({ reason, refusals }))).toEqual([
      { reason: 'unknown_or_revoked_key', refusals: 1 },
      { reason: 'not_a_key_of_this_stage', refusals: 1 },
    ]);

    // A minute later, the next invocation writes what the minute counted.
    flushDueRefusals(start + 60_005);
    expect(logged().map(({ reason, refusals }) => ({ reason, refusals }))).toEqual([
      { reason: 'unknown_or_revoked_key', refusals: 1 },
      { reason: 'not_a_key_of_this_stage', refusals: 1 },
      { reason: 'unknown_or_revoked_key', refusals: 249 },
    ]);
    expect(logged()[2]).toMatchObject({ operation: 'listOrders', since: new Date(start + 105).toISOString() });
    // The last fifty lookups a minute after the first of them.
    flushDueRefusals(start + 20_005 + 60_000);
    expect(lines().flatMap((line) => ('DynamoDbLatency' in line ? [(line.DynamoDbLatency as number[]).length] : []))).toEqual([
      100, 100, 50,
    ]);

    // Every refusal is counted once, in bytes far below a line of its own each.
    expect(logged().reduce((sum, line) => sum + Number(line.refusals), 0)).toBe(251);
    expect(Buffer.byteLength(written.join('')) / 251).toBeLessThan(512);
  });

  it('prints no metrics line when Powertools metrics are off, as Powertools would not', async () => {
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
    const { recordRefusal } = await import('../../functions/authorizer/refusals.ts');
    recordRefusal({ reason: 'malformed_header', operation: 'cancelOrder', calls: [] }, Date.now());
    expect(lines().filter((line) => '_aws' in line)).toEqual([]);
    expect(lines().map((line) => line.message)).toEqual(['authorization refused']);
  });
});
