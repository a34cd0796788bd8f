/**
 * A guard alarm protects a deploy only if it can reach ALARM while CodeDeploy still watches: from
 * the start of the traffic shift until all traffic has moved (the canary's bake, or the last step
 * of a linear shift). After that CodeDeploy no longer rolls back. The arithmetic is done on the
 * synthesized template, for every alarm every deployment group watches (whoever adds them).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, stageNames, sharedApp } from '../lib/cdk.ts';
import { metricDelaySeconds, watchedSeconds } from '../lib/deployments.ts';

const { template } = sharedApp();

type AlarmProperties = {
  AlarmName: string;
  Period?: number;
  Metrics?: { Period?: number; MetricStat?: { Period: number } }[];
  EvaluationPeriods: number;
  DatapointsToAlarm?: number;
};

/**
 * The longest a sustained breach that starts with the shift takes to set the alarm off: M
 * breaching periods (M = DatapointsToAlarm, else EvaluationPeriods) of P seconds, wholly after the
 * shift, plus the metric delay. CloudWatch evaluates once a minute over periods that end then (its
 * default sliding window, the User Guide's "Alarm evaluation window"): no period waits for the clock
 * to align with it.
 */
export const worstSecondsToAlarm = (alarm: AlarmProperties): number => {
  const periods = [alarm.Period, ...(alarm.Metrics ?? []).flatMap((metric) => [metric.Period, metric.MetricStat?.Period])].filter(
    (period): period is number => period !== undefined,
  );
  if (periods.length === 0) throw new Error(`${alarm.AlarmName}: no period`);
  const period = Math.max(...periods);
  return (alarm.DatapointsToAlarm ?? alarm.EvaluationPeriods) * period + metricDelaySeconds;
};

describe('the arithmetic', () => {
  it('counts M breaching periods and the metric delay', () => {
    expect(worstSecondsToAlarm({ AlarmName: 'a', Period: 300, EvaluationPeriods: 3, DatapointsToAlarm: 2 })).toBe(2 * 300 + 180);
    expect(worstSecondsToAlarm({ AlarmName: 'b', Metrics: [{ MetricStat: { Period: 60 } }, {}], EvaluationPeriods: 1 })).toBe(60 + 180);
    expect(watchedSeconds('CodeDeployDefault.LambdaCanary10Percent10Minutes')).toBe(600);
    expect(watchedSeconds('CodeDeployDefault.LambdaLinear10PercentEvery2Minutes')).toBe(1080);
  });
});

describe.each(stageNames)('the guard alarms of %s', (stage) => {
  const resources = template(stage).toJSON().Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>;
  const groups = Object.values(resources).filter((resource) => resource.Type === 'AWS::CodeDeploy::DeploymentGroup');

  it('can each reach ALARM while CodeDeploy still watches the shift, in every deployment group that shifts gradually', () => {
    expect(groups.length).toBeGreaterThan(0);
    const late: string[] = [];
    let checked = 0;
    for (const group of groups) {
      const watched = watchedSeconds(String(group.Properties.DeploymentConfigName));
      // All at once: nothing to watch during a shift (staging rehearses the path, production bakes).
      if (watched === 0) continue;
      const names = (group.Properties.AlarmConfiguration as { Alarms: { Name: { Ref: string } }[] }).Alarms.map((alarm) => alarm.Name.Ref);
      expect(names.length).toBeGreaterThan(0);
      for (const logicalId of names) {
        const alarm = resources[logicalId]!.Properties as unknown as AlarmProperties;
        const worst = worstSecondsToAlarm(alarm);
        checked += 1;
        if (worst > watched) late.push(`${alarm.AlarmName}: up to ${worst / 60} min to ALARM, CodeDeploy watches ${watched / 60} min`);
      }
    }
    expect(late).toEqual([]);
    if (stage === 'production') expect(checked).toBeGreaterThan(0);
  });
});

/**
 * The chance that `failedRuns` of `minutes` consecutive one-minute runs fail, somewhere within
 * `runs` runs, when each run fails on its own with probability `p`: every pattern of failures
 * enumerated (2^runs of them), so the figure is exact.
 */
export const chanceOfAlarm = (p: number, runs: number, failedRuns: number, minutes: number): number => {
  let chance = 0;
  for (let pattern = 0; pattern < 2 ** runs; pattern++) {
    const failed = Array.from({ length: runs }, (_, run) => (pattern >> run) & 1);
    const fires = failed.some((_, end) => failed.slice(Math.max(0, end - minutes + 1), end + 1).reduce((a, b) => a + b, 0) >= failedRuns);
    const count = failed.reduce((a, b) => a + b, 0);
    if (fires) chance += p ** count * (1 - p) ** (runs - count);
  }
  return chance;
};

/**
 * How often a synthetic-client run meets a new version that gets 10 % of the traffic: the run
 * lists twice (with and without gzip) and cancels three times (an id that cannot exist, and its own
 * pending order twice); the authorizer is called once per key per cache TTL (300 s), so about one
 * run in five reaches it at all.
 */
const perRun = { list: 1 - 0.9 ** 2, cancel: 1 - 0.9 ** 3, authorizer: 0.1 / 5 };

describe("CanaryFailed during production's canary deployment", () => {
  const resources = template('production').toJSON().Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>;
  const alarm = Object.values(resources).find(
    (resource) => resource.Type === 'AWS::CloudWatch::Alarm' && resource.Properties.AlarmName === 'StoreOrders-production-CanaryFailed',
  )!.Properties as unknown as AlarmProperties;
  const group = Object.values(resources).find((resource) => resource.Type === 'AWS::CodeDeploy::DeploymentGroup')!;
  // The runs whose failures can still set it off before CodeDeploy stops watching.
  const runs = (watchedSeconds(String(group.Properties.DeploymentConfigName)) - metricDelaySeconds) / 60;
  const odds = (p: number) => Math.round(100 * chanceOfAlarm(p, runs, alarm.DatapointsToAlarm!, alarm.EvaluationPeriods));
  const page = readFileSync(resolve(repoRoot, 'docs/reference/alarms.md'), 'utf8');

  it('stops a release whose new list or cancel answers every request wrongly with the odds docs/reference/alarms.md states', () => {
    expect(runs).toBe(12);
    const figures = { list: odds(perRun.list), cancel: odds(perRun.cancel), authorizer: odds(perRun.authorizer) };
    expect(figures).toEqual({ list: 68, cancel: 87, authorizer: 2 });
    expect(page).toContain(
      `about ${figures.list} % for a broken list, ${figures.cancel} % for a broken cancel and ${figures.authorizer} % for a broken authorizer`,
    );
    // The rule it replaced, two failed runs in a row, had about half of that: 30, 10 and 0.4 %.
    expect(Math.round(100 * chanceOfAlarm(perRun.list, runs, 2, 2))).toBe(30);
  });

  it('never fires on one failed run alone', () => {
    expect(alarm.DatapointsToAlarm).toBe(2);
    expect(chanceOfAlarm(1, 1, alarm.DatapointsToAlarm!, alarm.EvaluationPeriods)).toBe(0);
  });
});
