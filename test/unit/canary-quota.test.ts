/**
 * The synthetic client's tier must last its worst day: every run of the day (one each
 * `canaryIntervalMinutes`) with every request of the known-answer suite refused as busy until its
 * last try. Once the tier's daily quota is spent, each check fails (functions/canary/smoke-check.ts,
 * spentQuota), so a quota sized below this would page on-call and stop deploys for a configuration
 * error. The pre-traffic hook uses the canary key without the gateway (it invokes the authorizer and
 * the functions directly): the gateway's usage plan never counts it.
 */
import { describe, expect, it } from 'vitest';
import { keyedRequestsPerRun, mostBusyTries } from '../../functions/canary/smoke-check.ts';
import { canaryIntervalMinutes } from '../../infra/cdk/release-checks.ts';
import { loadSuites } from '../../infra/registry.ts';
import { type StageName, stages } from '../../infra/stage-config.ts';

const runsPerDay = (24 * 60) / canaryIntervalMinutes;
const suites = await loadSuites();

describe("the synthetic client's daily quota", () => {
  it.each(Object.keys(stages) as StageName[])('on %s holds every run of a day, every request busy until its last try', (stage) => {
    const { right, worstCase } = keyedRequestsPerRun({}, suites);
    // Per function: the authorizer 1 (a harmless request; the wrong key's is not its key), the v1 list 2, the cancel 5, the v2 list 3 pages and 2 filtered pages; the unknown route 1.
    expect(right).toBe(14);
    expect(worstCase).toBe(right * mostBusyTries);
    expect(worstCase * runsPerDay).toBeLessThan(stages[stage].tiers.canary.dailyQuota);
  });
});
