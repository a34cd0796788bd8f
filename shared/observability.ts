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
} as const;

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
