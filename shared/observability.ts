import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

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
