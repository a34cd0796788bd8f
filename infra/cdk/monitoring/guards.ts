import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { metricNames } from '../../../shared/observability.ts';
import type { FunctionContract } from '../../function-contract.ts';
import { ofStage } from '../contract-checks.ts';
import type { StoreFunction } from '../store-function.ts';
import { type AlarmTarget, alarm } from './stage-alarm.ts';
import {
  executedVersionMetric,
  failingMinutes,
  failingMinutesRule,
  functionMetric,
  latencyWatched,
  liveVersion,
  minute,
  newestNotAlone,
  stageFunctions,
} from './metrics.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';

/**
 * The guards of each function's deployments: alarms that judge the version its live alias moves
 * to, from signals of that version alone (Lambda's `ExecutedVersion` metrics and the functions'
 * own per-version records, shared/observability.ts). A guard names the version, so each deploy
 * updates it, before the alias: CloudFormation updates a resource after those it depends on, and
 * the alias depends on its guards (infra/cdk/store-function.ts). Requests without a valid key
 * never reach a route function, and reach both authorizer versions alike; clients under load and
 * clients leaving lists early move none of these.
 */
export function addGuardAlarms(target: AlarmTarget, props: StoreOrdersMonitoringProps) {
  for (const guarded of stageFunctions(props)) {
    addFailuresGuard(target, props, guarded);
    addShareGuard(target, props, guarded, 'Refused');
    // The authorizer has no documented refusal of its own: API Gateway answers its failures 500.
    if (guarded.contract !== props.authorizerContract) addShareGuard(target, props, guarded, 'Busy');
  }
  addLatencyGuards(target, props);
}

type Guarded = { readonly name: string; readonly id: string; readonly fn: StoreFunction; readonly contract: FunctionContract };

/**
 * The list's Lambda Errors less what its clients did: lists cut because their client stopped
 * reading (each a Lambda error) and lists their client left (each one or none: AWS does not say),
 * never below 0, so that a left list Lambda did not count hides no 500 answer. A list that ran its
 * maximum duration is not its client's doing: it is added (`tooLong`, dated at the cut), never subtracted.
 */
const lessClientEnds = 'IF(FILL(errors, 0) - FILL(cut, 0) - FILL(left, 0) > 0, FILL(errors, 0) - FILL(cut, 0) - FILL(left, 0), 0)';

/**
 * `<Name>Errors`: the new version failed, in 2 of the last 10 minutes (`failingMinutesRule`).
 * Lambda's Errors of its invocations (crashes, timeouts, streams that broke) and its own 500 answers
 * (`Faults`, which Lambda counts as successes); of the list, less the lists its clients stopped
 * reading or left; of the authorizer, less its refusals, which it answers by throwing. One
 * transient failure (a DynamoDB deadline missed once) never rolls a release back.
 */
function addFailuresGuard(target: AlarmTarget, props: StoreOrdersMonitoringProps, { name, id, fn, contract }: Guarded) {
  const version = liveVersion(fn);
  const errors = executedVersionMetric(fn, 'Errors', 'Sum');
  const own = (metricName: string) => functionMetric(props, id, metricName, 'Sum', version);
  const failures: { expression: string; usingMetrics: Record<string, cloudwatch.IMetric> } =
    contract === props.authorizerContract
      ? { expression: 'FILL(errors, 0) - FILL(refused, 0)', usingMetrics: { errors, refused: own(metricNames.refusals) } }
      : contract.alarms.errorsLessClientEnds
        ? {
            expression: `${lessClientEnds} + FILL(faults, 0) + FILL(tooLong, 0)`,
            usingMetrics: {
              errors,
              cut: own(metricNames.stalledListsCut),
              left: own(metricNames.listsLeftEarly),
              faults: own(metricNames.faults),
              tooLong: own(metricNames.listsRanTooLong),
            },
          }
        : { expression: 'FILL(errors, 0) + FILL(faults, 0)', usingMetrics: { errors, faults: own(metricNames.faults) } };
  const { failing, of } = failingMinutesRule;
  alarm(
    target,
    `${name}Errors`,
    `The ${name} function's new version failed (a crash, a timeout, a broken stream or a 500) in ${failing} of the last ${of} minutes.`,
    {
      metric: new cloudwatch.MathExpression({ label: `${name} failures of its live version`, period: minute, ...failures }),
      ...failingMinutes,
    },
    { guards: [id], runbook: contract.runbook },
  );
}

/**
 * The share guards' period: 10 minutes, so that a function called 20 times a minute (the
 * authorizer, the v2 page) gives a version at 10 % the answers a share needs in nearly every
 * period, where 5 minutes gave them in about two of three; still whole, and seen, within the bake.
 */
export const sharePeriod = Duration.minutes(10);

/**
 * The least part of a period's answers the new version must have given for its share to be
 * judged: half of CodeDeploy's first step (10 %, every configuration this service uses). A period
 * that began before the shift holds the old version's answers from before it and the new one's from
 * after: clients that changed what they send at the shift (a flood of wrong keys that began then)
 * would move the comparison. Half the period in the shift at least bounds that to half the change.
 */
export const newSharedPeriod = 0.075;

/**
 * A share guard's expression for the per-answer 0/1 record `counted` (its metrics `<counted>New`
 * and `<counted>All`): the share (%) of answers the new version counted, less the share the
 * versions before it counted in the same period (all versions' answers less the new one's), when
 * each gave `minAnswers` or more and the new version `newSharedPeriod` of all; else 0. Between
 * deploys only one version answers: 0. Judged over two periods, one enough (`newestNotAlone`):
 * never on the newest, partly arrived one alone.
 */
export const newerShareExpression = (minAnswers: number, counted: string) => {
  const older = (of: string) => `(FILL(${of}All, 0) - FILL(${of}New, 0))`;
  return (
    `IF(FILL(answersNew, 0) >= ${minAnswers} AND ${older('answers')} >= ${minAnswers} AND FILL(answersNew, 0) >= ${newSharedPeriod} * FILL(answersAll, 0), ` +
    `100 * FILL(${counted}New, 0) / FILL(answersNew, 0) - 100 * ${older(counted)} / ${older('answers')}, 0)`
  );
};

/** The metrics of a share guard: per-answer record `metricName` of the new version and of all versions, as sums and counts. */
const shareMetrics = (props: StoreOrdersMonitoringProps, { id, fn }: Guarded, metricName: string, counted: string) => {
  const of = (statistic: string, version?: string) => functionMetric(props, id, metricName, statistic, version);
  const version = liveVersion(fn);
  return {
    [`${counted}New`]: of('Sum', version),
    answersNew: of('SampleCount', version),
    [`${counted}All`]: of('Sum'),
    answersAll: of('SampleCount'),
  };
};

/**
 * The share guards: the new version answers a far larger share of its requests one way than the
 * versions before it, at the same time. CodeDeploy sends each request to one version or the other
 * by weight alone, so whatever clients send, and the load they make, reach both alike.
 * - `<Name>RefusedShare`: refused as the client's (4xx but 429; the authorizer's 401). Wrong keys, a
 *   flood of them, unknown orders reach both versions alike: only a version that refuses what the
 *   other accepts moves it (a cancel answering 409 for pending orders, a page refusing its cursors,
 *   an authorizer denying every key).
 * - `<Name>BusyShare`: a documented refusal of its own (429, or 503 with Retry-After: `Busy`).
 *   Capacity (list slots, reserved concurrency, DynamoDB's throughput) is shared, so load moves both
 *   shares alike: only a version that is busy where the other is not moves it (its DynamoDB client
 *   pointing nowhere, its list slots never free). The same test as RefusedShare.
 */
const shareGuards = {
  Refused: {
    rule: 'refusedShare',
    metricName: metricNames.refusals,
    counted: 'refused',
    what: 'refused',
    answers: 'of its answers (4xx but 429)',
  },
  Busy: {
    rule: 'busyShare',
    metricName: metricNames.busy,
    counted: 'busy',
    what: 'answered',
    answers: 'of its requests busy (429, or 503 with Retry-After)',
  },
} as const;

function addShareGuard(target: AlarmTarget, props: StoreOrdersMonitoringProps, guarded: Guarded, kind: keyof typeof shareGuards) {
  const { name, id, contract } = guarded;
  const { rule, metricName, counted, what, answers } = shareGuards[kind];
  const { points, minAnswers } = props.config.alarms[rule];
  alarm(
    target,
    `${name}${kind}Share`,
    `The ${name} function's new version ${what} ${points} points more ${answers} than the version before it, in one of the last two 10-minute periods with ${minAnswers}+ answers of each.`,
    {
      metric: new cloudwatch.MathExpression({
        label: `${name}: ${counted} share of the new version less the old (points)`,
        expression: newerShareExpression(minAnswers, counted),
        usingMetrics: shareMetrics(props, guarded, metricName, counted),
        period: sharePeriod,
      }),
      threshold: points,
      ...newestNotAlone,
    },
    { guards: [id], runbook: contract.runbook },
  );
}

/**
 * A route's latency guard: the p99 of its new version's answers (`AnswerLatency`: a buffered
 * answer whole, a streamed list to its first byte; cold starts' initialisation not included) at or
 * above the stage's threshold in three of five 1-minute periods, so that a few slow first
 * invocations do not set it off, and it reaches ALARM within the bake (test/infra/guard-alarms.test.ts).
 */
function addLatencyGuards(target: AlarmTarget, props: StoreOrdersMonitoringProps) {
  for (const { contract, route, fn, latency } of latencyWatched(props)) {
    const thresholdMs = ofStage(
      latency.thresholdMs,
      props.config.stage,
      `${contract.name}'s ${latency.alarm} (alarms.latencyP99.thresholdMs)`,
    );
    alarm(
      target,
      latency.alarm,
      `p99 of the ${route.operation} function's new version's answer time (AnswerLatency) at or above ${thresholdMs} ms in three of five 1-minute periods.`,
      {
        metric: functionMetric(props, contract.name, metricNames.answerLatency, 'p99', liveVersion(fn)).with({ period: minute }),
        threshold: thresholdMs,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
      },
      { guards: [contract.name], runbook: contract.runbook },
    );
  }
}
