/**
 * A guard alarm protects a deploy only if it can reach ALARM while CodeDeploy still watches: from
 * the start of the traffic shift until all traffic has moved (the canary's bake, or the last step
 * of a linear shift). After that CodeDeploy no longer rolls back. The arithmetic is done on the
 * synthesized template, for every alarm every deployment group watches (whoever adds them).
 */
import { describe, expect, it } from 'vitest';
import { stageNames, synthApp } from '../lib/cdk.ts';

const { template } = synthApp();

/**
 * Time from a metric's datapoint to the alarm seeing it: AWS services publish their metrics at
 * one-minute granularity, typically available within a minute or two, and CloudWatch evaluates
 * alarms once a minute (docs/decisions.md, issue 17). Three minutes is that with room.
 */
export const metricDelaySeconds = 180;

/**
 * How long CodeDeploy watches the alarms of a deployment with this predefined configuration: a
 * canary's bake, or the time until a linear shift's last step. All at once: no shift to watch.
 */
export const watchedSeconds = (deploymentConfigName: string): number => {
  const canary = /^CodeDeployDefault\.LambdaCanary10Percent(\d+)Minutes?$/.exec(deploymentConfigName);
  if (canary) return Number(canary[1]) * 60;
  const linear = /^CodeDeployDefault\.LambdaLinear10PercentEvery(\d+)Minutes?$/.exec(deploymentConfigName);
  if (linear) return 9 * Number(linear[1]) * 60;
  if (deploymentConfigName === 'CodeDeployDefault.LambdaAllAtOnce') return 0;
  throw new Error(`unknown deployment configuration ${deploymentConfigName}`);
};

type AlarmProperties = {
  AlarmName: string;
  Period?: number;
  Metrics?: { Period?: number; MetricStat?: { Period: number } }[];
  EvaluationPeriods: number;
  DatapointsToAlarm?: number;
};

/**
 * The longest a sustained breach that starts with the shift takes to set the alarm off: M
 * breaching periods (M = DatapointsToAlarm, else EvaluationPeriods) of P seconds, plus one more
 * period because periods are aligned to the clock and the one the shift starts in may hold too
 * little new traffic to breach, plus the metric delay.
 */
export const worstSecondsToAlarm = (alarm: AlarmProperties): number => {
  const periods = [alarm.Period, ...(alarm.Metrics ?? []).flatMap((metric) => [metric.Period, metric.MetricStat?.Period])].filter(
    (period): period is number => period !== undefined,
  );
  if (periods.length === 0) throw new Error(`${alarm.AlarmName}: no period`);
  const period = Math.max(...periods);
  return ((alarm.DatapointsToAlarm ?? alarm.EvaluationPeriods) + 1) * period + metricDelaySeconds;
};

describe('the arithmetic', () => {
  it('counts M breaching periods, one period of alignment and the metric delay', () => {
    expect(worstSecondsToAlarm({ AlarmName: 'a', Period: 300, EvaluationPeriods: 3, DatapointsToAlarm: 2 })).toBe(3 * 300 + 180);
    expect(worstSecondsToAlarm({ AlarmName: 'b', Metrics: [{ MetricStat: { Period: 60 } }, {}], EvaluationPeriods: 1 })).toBe(2 * 60 + 180);
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
