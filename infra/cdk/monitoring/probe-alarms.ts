import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { type AlarmTarget, alarm } from './stage-alarm.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';

/**
 * CanaryFailed's rule, M failed runs in N one-minute periods: two, so that one transient failure
 * never rolls a good release back; in ten, so that a defect reached by 10 % of the traffic, which
 * a run meets only now and then, still gathers two within the bake (the odds are computed in
 * test/infra/guard-alarms.test.ts and written in docs/deploying.md).
 */
export const canaryFailedRule = { failedRuns: 2, minutes: 10 } as const;

/**
 * The service's own probes, which know the right answers (the synthetic client, a Synthetics
 * canary: infra/cdk/release-checks.ts). CanaryFailed, a guard of every deployment: its runs answer
 * wrongly. A run that meets a documented refusal (429, or 503 with Retry-After) waits it out or
 * reports it apart, never as a failure. CanaryStopped, a page: nothing runs, nothing checks.
 */
export function addProbeAlarms(target: AlarmTarget, { canaryName }: Pick<StoreOrdersMonitoringProps, 'canaryName'>) {
  const runs = (statistic: string, period: Duration) =>
    new cloudwatch.Metric({
      namespace: 'CloudWatchSynthetics',
      metricName: 'SuccessPercent',
      dimensionsMap: { CanaryName: canaryName },
      statistic,
      period,
    });
  alarm(
    target,
    'CanaryFailed',
    `The synthetic client (Synthetics canary ${canaryName}) failed ${canaryFailedRule.failedRuns} runs in ${canaryFailedRule.minutes} minutes: the stage answers its checks wrongly or not at all.`,
    {
      metric: runs('Average', Duration.minutes(1)),
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      threshold: 100,
      evaluationPeriods: canaryFailedRule.minutes,
      datapointsToAlarm: canaryFailedRule.failedRuns,
    },
    { guards: 'all' },
  );
  // CanaryFailed sees no data when no run happens, and no data is not breaching there (a quiet
  // stage is fine): a canary that stopped, or cannot start, would leave the stage unwatched.
  alarm(
    target,
    'CanaryStopped',
    `The synthetic client (Synthetics canary ${canaryName}) has not completed a run for 10 minutes: nothing checks the stage's answers.`,
    {
      metric: runs('SampleCount', Duration.minutes(5)),
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      threshold: 1,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    },
  );
}
