import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { dynamoDbOperationDimension } from '../../../shared/dynamo-calls.ts';
import { metricNames, metricsNamespace } from '../../../shared/observability.ts';
import { resourcePath, type Route } from '../../../shared/routes.ts';
import { serviceName } from '../../names.ts';
import type { FunctionContract } from '../../function-contract.ts';
import type { StoreFunction } from '../store-function.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';

// What the alarms, the dashboard and the saved queries read: the stage's metrics and the functions' log groups.

export const period = Duration.minutes(5);
/** The period of the latency guards and of the failing-minutes rule: short enough to go off inside a canary's bake with several datapoints. */
export const minute = Duration.minutes(1);

/**
 * The rule of every alarm that counts what should not happen at all (a version's failures, the
 * authorizer's, a throttle of a function that reserves nothing, a DynamoDB throttle or server
 * error): 1 or more in each of `failing` of the last `of` one-minute periods. One event, or one burst
 * of them within a minute (a transient fault on AWS's side), moves nothing; a fault that lasts or
 * comes back does, within the bake (2 minutes and the metrics' delay). M of N also keeps the
 * newest, partly arrived minutes from deciding alone (docs/decisions/0911-guards-read-as-cloudwatch-evaluates.md).
 */
export const failingMinutesRule = { failing: 2, of: 10 } as const;

/** The alarm settings of the failing-minutes rule, for a metric or expression whose period is a minute. */
export const failingMinutes = {
  threshold: 1,
  evaluationPeriods: failingMinutesRule.of,
  datapointsToAlarm: failingMinutesRule.failing,
} as const;

/**
 * The settings of an alarm over 5-minute sums or shares: two periods, one of them enough. CloudWatch
 * evaluates once a minute over periods that end then, so the newest is partly arrived (its last
 * minutes late); FILL makes the missing part 0, and a single-period alarm would judge that part
 * alone and could stay OK. The one before it is whole (docs/decisions/0911-guards-read-as-cloudwatch-evaluates.md).
 */
export const newestNotAlone = { evaluationPeriods: 2, datapointsToAlarm: 1 } as const;

/**
 * A share that pages in two of the last three 5-minute periods: a burst within a minute falls in
 * one period, so it alone pages nobody however few the requests around it (three failed key
 * lookups in a busy minute are 1.2 % of 4 minutes' requests); a failure that lasts fills two.
 */
export const twoPeriodsOfThree = { evaluationPeriods: 3, datapointsToAlarm: 2 } as const;

type Stage = Pick<StoreOrdersMonitoringProps, 'config' | 'api'>;

/**
 * One of the service's own metrics (shared/observability.ts), with the stage's `service` dimension;
 * `namespace`: the functions' (default) or the probes' own (ProbeBusy).
 */
export function serviceMetric(
  { config }: Pick<Stage, 'config'>,
  metricName: string,
  statistic: string,
  namespace: string = metricsNamespace,
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace,
    metricName,
    dimensionsMap: { service: serviceName(config.stage) },
    statistic,
    period,
  });
}

/**
 * The version a deploy moves `fn`'s live alias to (between deploys, the one serving): a guard that
 * names it is updated before the alias, so it watches the new version from the shift's first request.
 */
export const liveVersion = (fn: StoreFunction): string => fn.alias.version.version;

/**
 * A per-version metric of function `fn` (shared/observability.ts, recordForVersion): of `version`,
 * or of every version together when `version` is undefined.
 */
export function functionMetric(
  { config }: Pick<Stage, 'config'>,
  fn: string,
  metricName: string,
  statistic: string,
  version?: string,
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: metricsNamespace,
    metricName,
    dimensionsMap: { function: fn, service: serviceName(config.stage), ...(version === undefined ? {} : { version }) },
    statistic,
    period,
  });
}

/**
 * Lambda's metric of the invocations of `fn`'s live alias that ran its live version: Lambda
 * publishes an alias's invocations under `ExecutedVersion` too (docs/decisions/0138-guards-judge-the-new-version.md).
 */
export function executedVersionMetric(fn: StoreFunction, metricName: string, statistic: string): cloudwatch.Metric {
  const functionName = fn.function.functionName;
  return new cloudwatch.Metric({
    namespace: 'AWS/Lambda',
    metricName,
    dimensionsMap: { FunctionName: functionName, Resource: `${functionName}:${fn.alias.aliasName}`, ExecutedVersion: liveVersion(fn) },
    statistic,
    period,
  });
}

/**
 * Lambda's metric of the invocations of `fn`'s live alias (its `Resource` dimension,
 * `<function>:<alias>`), of whichever version ran them: not of the function's other callers (the
 * pre-traffic hook invokes the new version directly, by its number).
 */
export function aliasMetric(fn: StoreFunction, metricName: string, statistic: string, window: Duration = period): cloudwatch.Metric {
  const functionName = fn.function.functionName;
  return new cloudwatch.Metric({
    namespace: 'AWS/Lambda',
    metricName,
    dimensionsMap: { FunctionName: functionName, Resource: `${functionName}:${fn.alias.aliasName}` },
    statistic,
    period: window,
  });
}

/**
 * The DynamoDB operations the functions call (shared/dynamo-calls.ts publishes DynamoDbLatency and
 * DynamoDbThrottles for each): every table's operations, and DescribeTable, which the list
 * reads its item count with.
 */
export function dynamoDbOperations({ tables }: Pick<StoreOrdersMonitoringProps, 'tables'>): string[] {
  return [...new Set([...tables.flatMap(({ operations }) => operations.map(String)), 'DescribeTable'])];
}

/** A per-operation DynamoDB call metric of the functions (DynamoDbLatency or DynamoDbThrottles). */
export function dynamoDbCallMetric({ config }: Pick<Stage, 'config'>, metricName: string, operation: string, statistic: string) {
  return new cloudwatch.Metric({
    namespace: metricsNamespace,
    metricName,
    dimensionsMap: { service: serviceName(config.stage), [dynamoDbOperationDimension]: operation },
    statistic,
    period,
  });
}

/**
 * API Gateway's metric of the stage, or of one method (the stage enables per-method metrics for
 * every route). The dimensions are the names themselves, not references to the API's stage: the
 * deploy guards read these alarms, and CloudFormation would otherwise find a cycle (alarm → stage
 * → authorizer → live alias → its deployment group → alarm).
 */
export function apiMetric({ api, config }: Stage, metricName: string, statistic: string, route?: Route): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: 'AWS/ApiGateway',
    metricName,
    dimensionsMap: {
      ApiName: api.restApiName,
      Stage: config.stage,
      ...(route === undefined ? {} : { Resource: resourcePath(route), Method: route.method }),
    },
    statistic,
    period,
  });
}

/** A sum of metrics in which an operand without datapoints counts as 0, not as "no sum"; per `over` (5 minutes unless said). */
export const filledSum = (label: string, metrics: Record<string, cloudwatch.IMetric>, over: Duration = period) =>
  new cloudwatch.MathExpression({
    label,
    expression: Object.keys(metrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + '),
    usingMetrics: metrics,
    period: over,
  });

/**
 * Requests answered 429 (THROTTLED or QUOTA_EXCEEDED: a key over its tier's usage plan, or the
 * stage throttle), counted from the access log per route: method and resource path, the
 * dimensions the dashboard reads. Who is limited is the `limited-keys` query's answer.
 */
export function countLimitedRequests(scope: Construct, { accessLogs }: Pick<StoreOrdersMonitoringProps, 'accessLogs'>) {
  new logs.MetricFilter(scope, 'TooManyRequestsFilter', {
    logGroup: accessLogs,
    filterPattern: logs.FilterPattern.numberValue('$.status', '=', 429),
    metricNamespace: metricsNamespace,
    metricName: metricNames.tooManyRequests,
    metricValue: '1',
    // In the order CloudWatch lists them (by name), as the dashboard's metrics do.
    dimensions: { method: '$.httpMethod', resource: '$.resourcePath', service: '$.service' },
  });
}

/** 429s of one route, as countLimitedRequests's metric filter counts them. */
export function tooManyRequestsOf({ config }: Pick<Stage, 'config'>, route: Route): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: metricsNamespace,
    metricName: metricNames.tooManyRequests,
    dimensionsMap: { method: route.method, resource: resourcePath(route), service: serviceName(config.stage) },
    statistic: 'Sum',
    period,
  });
}

/** The route functions whose contract asks for a near-timeout alarm. */
export function longRunning({ routeFunctions }: Pick<StoreOrdersMonitoringProps, 'routeFunctions'>) {
  return routeFunctions.filter(({ contract }) => contract.alarms.nearTimeout !== undefined);
}

/** The routes whose contract asks for a latency guard, with their function. */
export function latencyWatched({ routeFunctions }: Pick<StoreOrdersMonitoringProps, 'routeFunctions'>) {
  return routeFunctions.flatMap(({ contract, route, fn }) => {
    const latency = contract.alarms.latencyP99;
    return latency === undefined ? [] : [{ contract, route, fn, latency }];
  });
}

/**
 * Every function of the stage with its name (as its alarms and graphs say it), its name in the
 * registry (`id`, its per-version metrics' `function` dimension) and its contract.
 */
export function stageFunctions({
  routeFunctions,
  authorizer,
  authorizerContract,
}: Pick<StoreOrdersMonitoringProps, 'routeFunctions' | 'authorizer' | 'authorizerContract'>) {
  return [
    ...routeFunctions.map(({ name, contract, fn }) => ({ name, id: contract.name, fn, contract: contract as FunctionContract })),
    { name: 'Authorizer', id: authorizerContract.name, fn: authorizer, contract: authorizerContract },
  ];
}

/** Route functions with reserved concurrency (their contract's): a throttle of theirs is a documented refusal of load. */
export function reservingFunctions({ routeFunctions }: Pick<StoreOrdersMonitoringProps, 'routeFunctions'>) {
  return routeFunctions.filter(({ contract }) => contract.function.reservedConcurrency !== undefined);
}

export function functionLogGroups({ routeFunctions, authorizer }: Pick<StoreOrdersMonitoringProps, 'routeFunctions' | 'authorizer'>) {
  return [...routeFunctions.map(({ fn }) => fn.logGroup), authorizer.logGroup];
}
