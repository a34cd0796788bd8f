import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';

/** One structured JSON logger per function process. POWERTOOLS_* variables may override the defaults. */
export const logger = new Logger({ serviceName: 'store-orders' });

/** CloudWatch EMF metrics. The dashboard and alarms in infra/ read these names. */
export const metrics = new Metrics({ namespace: 'StoreOrders', serviceName: 'store-orders' });

export const metricNames = {
  ordersCancelled: 'OrdersCancelled',
  cancelConflicts: 'CancelConflicts',
  ordersNotFound: 'OrdersNotFound',
  authFailures: 'AuthFailures',
  ordersListed: 'OrdersListed',
  listDuration: 'ListDuration',
  invalidStoredOrders: 'InvalidStoredOrders',
} as const;

/** Publishes what a request recorded; unlike Powertools' logMetrics, says nothing when it recorded nothing. */
export const flushMetrics = () => {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
};

/** The ColdStart metric once per process, and a flush after every invocation. */
export const metricsMiddleware = (): MiddlewareObj<unknown, unknown, Error, Context> => ({
  before: (request) => metrics.captureColdStartMetric(request.context.functionName),
  after: flushMetrics,
  onError: flushMetrics,
});
