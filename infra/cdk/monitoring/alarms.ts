import { Aws, Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { metricNames, metricsNamespace } from '../../../shared/observability.ts';
import { operations } from '../../operations.ts';
import {
  apiMetric,
  countLimitedRequests,
  filledSum,
  latencyPeriod,
  latencyWatched,
  longRunning,
  period,
  serviceMetric,
} from './metrics.ts';
import type { StageConfig } from '../../stage-config.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';

/** A long-running function (the list) may run this close to its timeout before on-call hears of it. */
const nearTimeoutShare = 0.8;

/**
 * The topic every alarm notifies, with the stage's e-mail subscription when the stage names one.
 * A topic policy replaces SNS's default one, and `enforceSSL` writes one holding only its Deny:
 * without the Allow below, CloudWatch may not publish and no alarm reaches anyone. Only this
 * stage's alarms (their names start with the prefix), in this account and region, may publish.
 */
export function addAlarmTopic(scope: Construct, config: StageConfig, prefix: string): sns.Topic {
  const topic = new sns.Topic(scope, 'AlarmTopic', { displayName: `Store Orders ${config.stage} alarms`, enforceSSL: true });
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'StageAlarmsPublish',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
        ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:cloudwatch:${Aws.REGION}:${Aws.ACCOUNT_ID}:alarm:${prefix}-*` },
      },
    }),
  );
  if (config.alarms.email !== undefined) topic.addSubscription(new subscriptions.EmailSubscription(config.alarms.email));
  return topic;
}

/** The stage's alarms so far, in the order they were added (the dashboard's status widget lists them so). */
export interface StageAlarms {
  readonly all: cloudwatch.Alarm[];
  /**
   * The alarms a bad release would set off: CodeDeploy watches them while it shifts traffic to
   * a new version and rolls back when one goes off (at most 10 per deployment group).
   */
  readonly guards: cloudwatch.Alarm[];
}

interface AlarmTarget extends StageAlarms {
  readonly scope: Construct;
  readonly prefix: string;
  readonly topic: sns.ITopic;
}

/**
 * The alarms that docs/runbook.md explains (one section per alarm id). Each fires on the fault
 * its name says and only then: a refused key is not an authorizer failure, and a long list is
 * not a slow API.
 */
export function addAlarms(scope: Construct, props: StoreOrdersMonitoringProps, prefix: string, topic: sns.ITopic): StageAlarms {
  const target: AlarmTarget = { scope, prefix, topic, all: [], guards: [] };
  addApiAlarms(target, props);
  addFunctionAlarms(target, props);
  addAuthorizerAlarms(target, props);
  // Not an alarm: the 429 count the dashboard graphs, kept in its place among the metric filters.
  countLimitedRequests(scope, props);
  addWrongAnswerAlarms(target, props);
  addTableAlarms(target, props);
  return { all: target.all, guards: target.guards };
}

function alarm(
  target: AlarmTarget,
  alarmId: string,
  what: string,
  options: Omit<cloudwatch.AlarmProps, 'alarmName' | 'alarmDescription'>,
  { guardsDeploys = false }: { guardsDeploys?: boolean } = {},
) {
  const created = new cloudwatch.Alarm(target.scope, alarmId, {
    alarmName: `${target.prefix}-${alarmId}`,
    alarmDescription: `${what} Runbook: docs/runbook.md, section "${alarmId}".`,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    // No traffic is not a problem.
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    ...options,
  });
  created.addAlarmAction(new SnsAction(target.topic));
  created.addOkAction(new SnsAction(target.topic));
  target.all.push(created);
  if (guardsDeploys) target.guards.push(created);
  return created;
}

/** Api5xxRate's expression: the 5xx share of 5 minutes with at least `minRequests` requests, else 0. */
export const serverErrorRateExpression = (minRequests: number) => `IF(requests >= ${minRequests}, 100 * FILL(errors, 0) / requests, 0)`;

/** The API as clients see it: errors over all routes; latency per route, as each route's client waits. */
function addApiAlarms(target: AlarmTarget, props: StoreOrdersMonitoringProps) {
  const { config } = props;
  alarm(
    target,
    'Api5xxRate',
    `${config.alarms.serverErrorRatePercent}% or more of the requests in 5 minutes were answered with a 5xx status (5 minutes with ${config.alarms.serverErrorMinRequests}+ requests).`,
    {
      // Like RefusedShare: a handful of requests (the synthetic client's alone) makes one transient 5xx a large share.
      metric: new cloudwatch.MathExpression({
        label: '5xx rate (%)',
        expression: serverErrorRateExpression(config.alarms.serverErrorMinRequests),
        usingMetrics: {
          errors: apiMetric(props, '5XXError', 'Sum'),
          requests: apiMetric(props, 'Count', 'Sum'),
        },
        period,
      }),
      threshold: config.alarms.serverErrorRatePercent,
      evaluationPeriods: 1,
    },
    { guardsDeploys: true },
  );
  // A cancel's latency is what its client waits for; a streamed list's lasts until its last byte, so the list is judged apart.
  // Three 1-minute periods out of five: slow minutes of cold starts alone do not set it off, and
  // it reaches ALARM within the canary's bake (test/infra/guard-alarms.test.ts does the arithmetic).
  for (const { route, latency } of latencyWatched(props)) {
    const thresholdMs = config.alarms[latency.threshold];
    alarm(
      target,
      `${latency.name}LatencyP99`,
      `p99 latency of ${route.method} at or above ${thresholdMs} ms in three of five 1-minute periods.`,
      {
        metric: apiMetric(props, 'Latency', 'p99', route).with({ period: latencyPeriod }),
        threshold: thresholdMs,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
      },
      { guardsDeploys: true },
    );
  }
  alarm(
    target,
    'ListFirstByteP99',
    `p99 time to the list's first byte at or above ${config.alarms.listFirstByteP99Ms} ms in three of five 1-minute periods.`,
    {
      metric: serviceMetric(props, metricNames.listFirstByte, 'p99').with({ period: latencyPeriod }),
      threshold: config.alarms.listFirstByteP99Ms,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
    },
    { guardsDeploys: true },
  );
}

/**
 * The list function's failures: Lambda's Errors less the lists cut because their client stopped
 * reading (StalledListsCut). Such a cut ends the stream with an error, so that the client sees a
 * cut connection rather than a list that looks whole, and Lambda counts that error; but a client
 * that stops reading is no failure of the function, and must not page or roll a release back.
 */
function listFailures(props: StoreOrdersMonitoringProps, errors: cloudwatch.IMetric) {
  return new cloudwatch.MathExpression({
    label: 'errors, less lists cut for a stalled client',
    expression: 'FILL(errors, 0) - FILL(stalled, 0)',
    usingMetrics: { errors, stalled: serviceMetric(props, metricNames.stalledListsCut, 'Sum') },
    period,
  });
}

function addFunctionAlarms(target: AlarmTarget, props: StoreOrdersMonitoringProps) {
  const { config, routeFunctions, authorizer } = props;
  for (const { name, route, fn } of routeFunctions) {
    // The route functions turn every error into a response: an Errors datapoint is a crash, a timeout or a cut stream.
    const errors = fn.function.metricErrors({ statistic: 'Sum', period });
    alarm(
      target,
      `${name}Errors`,
      `The ${name} function failed ${config.alarms.functionErrors}+ times in 5 minutes.`,
      {
        metric: operations[route.operation].alarms.errorsLessStalledCuts ? listFailures(props, errors) : errors,
        threshold: config.alarms.functionErrors,
        evaluationPeriods: 1,
      },
      { guardsDeploys: true },
    );
  }
  // A long-running operation (its entry in infra/operations.ts) also alarms before it reaches its timeout.
  for (const { name, route, fn } of longRunning(props)) {
    const { function: settings, alarms } = operations[route.operation];
    const timeoutMs = settings.timeoutSeconds * 1000;
    alarm(
      target,
      `${name}NearTimeout`,
      `${alarms.nearTimeout!.invocation} ran for ${nearTimeoutShare * 100}% or more of its ${timeoutMs / 60_000}-minute timeout.`,
      {
        metric: fn.function.metricDuration({ statistic: 'Maximum', period }),
        threshold: timeoutMs * nearTimeoutShare,
        evaluationPeriods: 1,
      },
    );
  }
  for (const { name, fn } of [...routeFunctions, { name: 'Authorizer', fn: authorizer }]) {
    alarm(target, `${name}Throttles`, `Lambda throttled the ${name} function.`, {
      metric: fn.function.metricThrottles({ statistic: 'Sum', period }),
      threshold: 1,
      evaluationPeriods: 1,
    });
  }
}

/**
 * The authorizer refuses a key by throwing "Unauthorized", which Lambda counts in Errors: an
 * alarm on Errors would page on every wrong key. A failure is what API Gateway reports as
 * AUTHORIZER_FAILURE or AUTHORIZER_CONFIGURATION_ERROR (a crash, a timeout, DynamoDB down),
 * counted from the access log. Refused keys have their own alarm, at a volume that matters.
 */
function addAuthorizerAlarms(target: AlarmTarget, props: StoreOrdersMonitoringProps) {
  const { config, accessLogs } = props;
  new logs.MetricFilter(target.scope, 'AuthorizerFailuresFilter', {
    logGroup: accessLogs,
    filterPattern: logs.FilterPattern.any(
      logs.FilterPattern.stringValue('$.errorResponseType', '=', 'AUTHORIZER_FAILURE'),
      logs.FilterPattern.stringValue('$.errorResponseType', '=', 'AUTHORIZER_CONFIGURATION_ERROR'),
    ),
    metricNamespace: metricsNamespace,
    metricName: metricNames.authorizerFailures,
    metricValue: '1',
    dimensions: { service: '$.service' },
  });
  alarm(
    target,
    'AuthorizerFailures',
    `The authorizer failed ${config.alarms.functionErrors}+ times in 5 minutes (refused keys not counted).`,
    { metric: serviceMetric(props, metricNames.authorizerFailures, 'Sum'), threshold: config.alarms.functionErrors, evaluationPeriods: 1 },
    { guardsDeploys: true },
  );
  alarm(target, 'AuthFailures', `${config.alarms.authFailures}+ requests with an unknown or revoked key in 5 minutes.`, {
    metric: serviceMetric(props, metricNames.authFailures, 'Sum'),
    threshold: config.alarms.authFailures,
    evaluationPeriods: 1,
  });
}

/**
 * CanaryFailed's rule, M failed runs in N one-minute periods: two, so that one transient failure
 * never rolls a good release back; in ten, so that a defect reached by 10 % of the traffic, which
 * a run meets only now and then, still gathers two within the bake (the odds are computed in
 * test/infra/guard-alarms.test.ts and written in docs/deploying.md).
 */
export const canaryFailedRule = { failedRuns: 2, minutes: 10 } as const;

/**
 * Alarms for a service that answers, but wrongly (guards too, so a release doing it rolls back):
 * the synthetic client's runs failing (docs/runbook.md, "CanaryFailed"), and a jump in the share
 * of requests refused with 401, counted from the access log ("RefusedShare"). Both judge 1-minute
 * periods, so either can stop the 15-minute canary deployment. CanaryFailed counts 2 failed runs
 * in any 10 minutes, not 2 in a row: while CodeDeploy sends 10 % of the traffic to a new version,
 * a run meets that version only now and then (docs/deploying.md, "What the guards see").
 */
function addWrongAnswerAlarms(target: AlarmTarget, props: StoreOrdersMonitoringProps) {
  addCanaryAlarms(target, props.canaryName);
  addRefusedShareAlarm(target, props);
}

/** CanaryFailed (a guard): the synthetic client's runs fail; CanaryStopped: it has stopped running. */
function addCanaryAlarms(target: AlarmTarget, canaryName: string) {
  const minute = Duration.minutes(1);
  alarm(
    target,
    'CanaryFailed',
    `The synthetic client (Synthetics canary ${canaryName}) failed ${canaryFailedRule.failedRuns} runs in ${canaryFailedRule.minutes} minutes: the stage answers its read-only checks wrongly or not at all.`,
    {
      metric: new cloudwatch.Metric({
        namespace: 'CloudWatchSynthetics',
        metricName: 'SuccessPercent',
        dimensionsMap: { CanaryName: canaryName },
        statistic: 'Average',
        period: minute,
      }),
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      threshold: 100,
      evaluationPeriods: canaryFailedRule.minutes,
      datapointsToAlarm: canaryFailedRule.failedRuns,
    },
    { guardsDeploys: true },
  );
  // CanaryFailed sees no data when no run happens, and no data is not breaching there (a quiet
  // stage is fine): a canary that stopped, or cannot start, would leave the stage unwatched.
  alarm(
    target,
    'CanaryStopped',
    `The synthetic client (Synthetics canary ${canaryName}) has not completed a run for 10 minutes: nothing checks the stage's answers.`,
    {
      metric: new cloudwatch.Metric({
        namespace: 'CloudWatchSynthetics',
        metricName: 'SuccessPercent',
        dimensionsMap: { CanaryName: canaryName },
        statistic: 'SampleCount',
        period: Duration.minutes(5),
      }),
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      threshold: 1,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    },
  );
}

/** RefusedShare (a guard): the share of requests answered 401, from the access log's per-minute counts. */
function addRefusedShareAlarm(target: AlarmTarget, props: StoreOrdersMonitoringProps) {
  const { config, accessLogs } = props;
  const minute = Duration.minutes(1);
  const count = (id: string, metricName: string, filterPattern: logs.IFilterPattern) => {
    new logs.MetricFilter(target.scope, id, {
      logGroup: accessLogs,
      filterPattern,
      metricNamespace: metricsNamespace,
      metricName,
      metricValue: '1',
      dimensions: { service: '$.service' },
    });
    return serviceMetric(props, metricName, 'Sum').with({ period: minute });
  };
  const { percent, minRequests } = config.alarms.refusedShare;
  alarm(
    target,
    'RefusedShare',
    `${percent}% or more of the requests were refused with 401 in two 1-minute periods in a row (minutes with ${minRequests}+ requests).`,
    {
      metric: new cloudwatch.MathExpression({
        label: 'refused with 401 (%)',
        expression: `IF(requests >= ${minRequests}, 100 * FILL(refused, 0) / requests, 0)`,
        usingMetrics: {
          refused: count('RefusedRequestsFilter', metricNames.refusedRequests, logs.FilterPattern.numberValue('$.status', '=', 401)),
          requests: count('RequestsFilter', metricNames.requests, logs.FilterPattern.numberValue('$.status', '>', 0)),
        },
        period: minute,
      }),
      threshold: percent,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
    },
    { guardsDeploys: true },
  );
}

/** On-demand tables rarely throttle: any throttle or DynamoDB-side error of this service's operations is news. */
function addTableAlarms(target: AlarmTarget, { tables }: StoreOrdersMonitoringProps) {
  for (const { id: tableId, table, operations } of tables) {
    const perOperation = (metricName: string) =>
      Object.fromEntries(
        operations.map((operation) => [
          operation.toLowerCase(),
          table.metric(metricName, { dimensionsMap: { TableName: table.tableName, Operation: operation }, statistic: 'Sum', period }),
        ]),
      );
    alarm(target, `${tableId}Throttles`, `DynamoDB throttled requests of this service to ${tableId}.`, {
      metric: filledSum('throttled requests', perOperation('ThrottledRequests')),
      threshold: 1,
      evaluationPeriods: 1,
    });
    alarm(target, `${tableId}SystemErrors`, `DynamoDB answered requests of this service to ${tableId} with a server error.`, {
      metric: filledSum('system errors', perOperation('SystemErrors')),
      threshold: 1,
      evaluationPeriods: 1,
    });
  }
}
