import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { metricNames, probeMetricsNamespace } from '../../../shared/observability.ts';
import { serviceMetric } from './metrics.ts';
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
 * ProbeBusy's rule: the probes found the service busy (ProbeBusy ≥ 1) in `busyRuns` of the last
 * `minutes` one-minute periods (the synthetic client runs once a minute): most runs of a quarter of
 * an hour checked nothing, whatever the reason (load, a quota spent, a release busy for all).
 */
export const probeBusyRule = { busyRuns: 8, minutes: 15 } as const;

/**
 * CanarySetupFailed's rule: the synthetic client could not set up some of its checks (its settings,
 * its key, its own probe orders refused: CanarySetupFailed ≥ 1) in `runs` of the last `minutes`
 * one-minute periods. Not one run: a throttled write or a key rotated between two reads heals by
 * the next run; three in five is a canary that stays unable to check.
 */
export const canarySetupFailedRule = { runs: 2, minutes: 10 } as const;

/**
 * The service's own probes, which know the right answers (the synthetic client, a Synthetics
 * canary: infra/cdk/release-checks.ts). CanaryFailed, a guard of every deployment: its runs answer
 * wrongly. A run that meets a documented refusal (429, or 503 with Retry-After) waits it out or
 * reports it apart, never as a failure. CanaryStopped, a page: nothing runs, nothing checks.
 * CanarySetupFailed, a page: the canary runs but cannot set its checks up (a canary that cannot run
 * is not a failing release, so never CanaryFailed). ProbeBusy, a ticket: the probes' checks were
 * refused as busy in most runs, so they check little.
 */
export function addProbeAlarms(target: AlarmTarget, props: Pick<StoreOrdersMonitoringProps, 'canaryName' | 'config'>) {
  const { canaryName } = props;
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
  // A run that cannot set up a check passes (SuccessPercent 100): this alarm, not CanaryFailed, tells a person.
  alarm(
    target,
    'CanarySetupFailed',
    `The synthetic client (Synthetics canary ${canaryName}) could not set up its checks (its settings, its key, its own probe orders refused) in ${canarySetupFailedRule.runs} of the last ${canarySetupFailedRule.minutes} minutes: it checks the stage only in part, or not at all.`,
    {
      metric: serviceMetric(props, metricNames.probeSetupFailed, 'Maximum', probeMetricsNamespace).with({ period: Duration.minutes(1) }),
      threshold: 1,
      evaluationPeriods: canarySetupFailedRule.minutes,
      datapointsToAlarm: canarySetupFailedRule.runs,
    },
  );
  alarm(
    target,
    'ProbeBusy',
    `The probes (the synthetic client, the pre-traffic hook) found the service busy (429, or 503 with Retry-After, until their time ran out) in ${probeBusyRule.busyRuns} of the last ${probeBusyRule.minutes} minutes: their checks check little.`,
    {
      metric: serviceMetric(props, metricNames.probeBusy, 'Maximum', probeMetricsNamespace).with({ period: Duration.minutes(1) }),
      threshold: 1,
      evaluationPeriods: probeBusyRule.minutes,
      datapointsToAlarm: probeBusyRule.busyRuns,
    },
    { kind: 'ticket' },
  );
}
