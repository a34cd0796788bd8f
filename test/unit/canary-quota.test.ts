/**
 * The synthetic client's tier must last its worst day: every run of the day (one each
 * `canaryIntervalMinutes`) with every check refused as busy until its last try. Once the tier's
 * daily quota is spent, each check fails (functions/canary/smoke-check.ts, spentQuota), so a quota
 * sized below this would page on-call and stop deploys for a configuration error. The pre-traffic
 * hook uses the canary key without the gateway (it invokes the authorizer and the functions
 * directly): the gateway's usage plan never counts it.
 */
import { describe, expect, it } from 'vitest';
import { keyedRequestsPerRun, mostBusyTries } from '../../functions/canary/smoke-check.ts';
import { canaryIntervalMinutes } from '../../infra/cdk/release-checks.ts';
import { type StageName, stages } from '../../infra/stage-config.ts';
import type { ProbeOrders } from '../../shared/probe-writes.ts';

const runsPerDay = (24 * 60) / canaryIntervalMinutes;
/** The synthetic client's run: its own probe order, and the filtered page where its stage asks for it. */
const canaryRun = (stage: StageName) => ({ statusFilter: stages[stage].statusFilterChecks, probeOrders: {} as ProbeOrders });

describe("the synthetic client's daily quota", () => {
  it.each(Object.keys(stages) as StageName[])('on %s holds every run of a day, every check busy until its last try', (stage) => {
    const { right, worstCase } = keyedRequestsPerRun(canaryRun(stage));
    // Two v1 lists, two v2 pages, the filtered page where it is on, an unknown route, three cancels.
    expect(right).toBe(stages[stage].statusFilterChecks ? 9 : 8);
    expect(worstCase).toBeGreaterThanOrEqual((right - 1) * mostBusyTries);
    expect(worstCase * runsPerDay).toBeLessThan(stages[stage].tiers.canary.dailyQuota);
  });
});
