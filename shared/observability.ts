import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { MiddlewareObj } from '@middy/core';
import type { InvalidItemReport } from './schemas.ts';

/**
 * One structured JSON logger per function process. No service name here: constructor options
 * win over POWERTOOLS_SERVICE_NAME, which the stage sets (store-orders-<stage>) and its
 * alarms, dashboard and queries read. The same holds for the metrics' `service` dimension.
 */
export const logger = new Logger();

/** The CloudWatch namespace of the service's own metrics; infra/ reads the same constant. */
export const metricsNamespace = 'StoreOrders';

/**
 * The namespace of what the probes publish themselves (ProbeBusy, shared/probe-writes.ts): their
 * roles may publish here only, so code running under them cannot forge a metric a guard reads.
 */
export const probeMetricsNamespace = 'StoreOrders/Probes';

/** CloudWatch EMF metrics, with the dimension `service` (POWERTOOLS_SERVICE_NAME) only. */
export const metrics = new Metrics({ namespace: metricsNamespace });

/** The metric names the functions emit; the dashboard and alarms in infra/ read these. */
export const metricNames = {
  ordersCancelled: 'OrdersCancelled',
  cancelConflicts: 'CancelConflicts',
  ordersNotFound: 'OrdersNotFound',
  authFailures: 'AuthFailures',
  ordersListed: 'OrdersListed',
  listDuration: 'ListDuration',
  listFirstByte: 'ListFirstByte',
  invalidStoredOrders: 'InvalidStoredOrders',
  /** A list refused because its key already runs its tier's concurrent lists (429). */
  listsRefusedPerKey: 'ListsRefusedPerKey',
  /**
   * A list cut by the function because its client took nothing of it for LIST_STALL_SECONDS, read
   * below the minimum rate, or kept it past its maximum duration: the invocation ends with an error
   * (Lambda counts it in Errors), dated at the invocation's start.
   */
  stalledListsCut: 'StalledListsCut',
  /**
   * A list cut by the function because it had run its maximum duration (maxListMs) while its client
   * kept reading: the version's failure, not its client's (ListOrdersErrors counts it). Per version,
   * dated when the cut happens, so that the guard sees it as soon as it can.
   */
  listsRanTooLong: 'ListsRanTooLong',
  /**
   * A streamed answer whose client left before its end (shared/http.ts): the invocation resolves
   * and the list's lease is given back at once. Dated at the invocation's start, as Lambda dates an
   * Errors datapoint: whether Lambda counts such an invocation in Errors is not the function's to decide.
   */
  listsLeftEarly: 'ListsLeftEarly',
  /**
   * Published by the probes (the synthetic client and the pre-traffic hook, shared/probe-writes.ts,
   * with PutMetricData), once a run: how many of its checks found the service busy (429, or 503 with
   * Retry-After; Lambda throttling the hook's invocation) until their time ran out. 0 in a run that
   * was never refused. A busy check is no failed check.
   */
  probeBusy: 'ProbeBusy',
  /**
   * Published by the synthetic client once a run beside ProbeBusy: how many of its checks it could
   * not set up (its key unreadable, its probe order refused). Its own alarm, never CanaryFailed.
   */
  probeSetupFailed: 'ProbeSetupFailed',
  /** Not emitted by a function: counted from the API access log by a metric filter (infra/). */
  authorizerFailures: 'AuthorizerFailures',
  /** Likewise: requests answered 429 (a key's usage plan or the stage throttle), per route. */
  tooManyRequests: 'TooManyRequests',
  /** Likewise: requests answered 401, and all requests, whose ratio the RefusedShare alarm watches. */
  refusedRequests: 'RefusedRequests',
  requests: 'Requests',
  /** Each DynamoDB call's time (ms), its retries included, per DynamoDB operation (shared/dynamo-calls.ts). */
  dynamoDbLatency: 'DynamoDbLatency',
  /** DynamoDB attempts throttled, per request and DynamoDB operation (0 included). */
  dynamoDbThrottles: 'DynamoDbThrottles',
  /** A filtered v2 page refused with 503 and Retry-After because the status index is not ACTIVE yet: a documented refusal, not a failure. */
  statusIndexNotReady: 'StatusIndexNotReady',
  /**
   * Per answer, per function and per version (recordAnswer): 1 when the answer is the function's
   * own failure (500 internal_error; for the authorizer anything thrown but its refusal), else 0.
   */
  faults: 'Faults',
  /** Likewise: 1 when the answer refuses the request as the client's (4xx other than 429; the authorizer's 401), else 0. */
  refusals: 'Refusals',
  /**
   * Likewise: 1 when the function answered a documented refusal of its own (429, or 503 with
   * Retry-After: list slots full, the status index not ready, DynamoDB unreachable or throttling), else 0.
   */
  busy: 'Busy',
  /** Likewise: ms from the invocation's start to its answer (a streamed list's: to its first byte). */
  answerLatency: 'AnswerLatency',
} as const;

/**
 * The version this process runs: Lambda's `AWS_LAMBDA_FUNCTION_VERSION` (the number a deploy
 * published, the `ExecutedVersion` of an alias invocation), `$LATEST` where nothing sets it (npm start).
 */
export const functionVersion = (): string => process.env.AWS_LAMBDA_FUNCTION_VERSION ?? '$LATEST';

/**
 * The per-version metrics of each function, in a Metrics of their own so that each line carries
 * two dimension sets, `service, function` and `service, function, version`, and nothing else does:
 * a deploy's guard alarms read the new version's datapoints, and the versions before it as all less those.
 */
const versionMetrics = new Map<string, Metrics>();

/** Counts (or a time) of `fn`'s running version, published at once; `at` dates them (ms since the epoch) when not now. */
export const recordForVersion = (fn: string, values: Partial<Record<string, number>>, at?: number) => {
  let perVersion = versionMetrics.get(fn);
  if (perVersion === undefined)
    versionMetrics.set(fn, (perVersion = new Metrics({ namespace: metricsNamespace, defaultDimensions: { function: fn } })));
  // Two sets: the defaults alone (service, function), and with the version.
  perVersion.addDimensions({});
  perVersion.addDimensions({ version: functionVersion() });
  if (at !== undefined) perVersion.setTimestamp(at);
  for (const [name, value] of Object.entries(values))
    if (value !== undefined) perVersion.addMetric(name, name === metricNames.answerLatency ? 'Milliseconds' : 'Count', value);
  perVersion.publishStoredMetrics();
};

/**
 * How one answer of `fn` went, for its version's guard alarms (infra/cdk/monitoring/guards.ts). The
 * authorizer records no fault and no busy answer: Lambda counts each of its failures (it fails by
 * throwing), and it has no documented refusal of its own.
 */
export const recordAnswer = (fn: string, answer: { fault?: boolean; refused: boolean; busy?: boolean; latencyMs?: number }, at?: number) =>
  recordForVersion(
    fn,
    {
      [metricNames.faults]: answer.fault === undefined ? undefined : answer.fault ? 1 : 0,
      [metricNames.refusals]: answer.refused ? 1 : 0,
      [metricNames.busy]: answer.busy === undefined ? undefined : answer.busy ? 1 : 0,
      [metricNames.answerLatency]: answer.latencyMs,
    },
    at,
  );

/** Publishes what a request recorded; unlike Powertools' logMetrics, says nothing when it recorded nothing. */
export const flushMetrics = () => {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
};

/**
 * A flush after every invocation. No ColdStart metric: Lambda's own REPORT lines count cold
 * starts (saved query `cold-starts-and-memory`), and each custom metric has a monthly price.
 */
export const metricsMiddleware = (): MiddlewareObj => ({ after: flushMetrics, onError: flushMetrics });

/** What a list does with a stored order that breaks the table contract: counted and logged, never fatal. */
export const reportInvalidStoredOrder = (report: InvalidItemReport) => {
  metrics.addMetric(metricNames.invalidStoredOrders, 'Count', 1);
  logger.warn('stored order breaks the table contract', { ...report });
};
