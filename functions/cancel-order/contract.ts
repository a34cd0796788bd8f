/**
 * cancelOrder's contract: everything the rest of the house needs to know about it (infra/contract.ts);
 * the registry (infra/registry.ts) reads it, the handler never does.
 */
import type { OperationContract } from '../../infra/function-contract.ts';
import { orderIdPathSchema } from '../../infra/wire-forms.ts';
import { orderIdExamples } from '../../infra/openapi/examples.ts';
import { route } from './route.ts';

export const cancelOrderContract = {
  name: route.operation,
  route,
  // One conditional UpdateItem. The timeout leaves room for DynamoDB's bounded retries so a
  // slow database still ends in a 503 from the function, well before API Gateway's 29 s.
  function: {
    handlerFile: 'functions/cancel-order/handler.ts',
    description: 'Store Orders: DELETE /v1/store/orders/{orderId} (cancelOrder)',
    memorySize: 512,
    timeoutSeconds: 10,
    environment: (_stage, tables) => ({ ORDERS_TABLE: tables.orders }),
  },
  tableAccess: { orders: ['dynamodb:UpdateItem'] },
  throttling: 'request',
  integrationTimeoutSeconds: 29,
  alarms: {
    // What a cancelling client waits: API Gateway's own figure, in three of five 1-minute periods.
    latencyP99: { name: 'Cancel', alarm: 'CancelLatencyP99', thresholdMs: { staging: 3000, production: 1500 } },
    slo: {
      id: 'CancelLatency',
      what: 'cancels (API Gateway latency of DELETE)',
      measure: 'gatewayLatency',
      objective: { staging: { percent: 99, thresholdMs: 3000 }, production: { percent: 99, thresholdMs: 1500 } },
    },
  },
  runbook: 'docs/runbook.md',
  knownAnswers: 'functions/cancel-order/known-answers.ts',
  published: {
    description:
      'Cancels a `pending` order (its status becomes `cancelled`). Cancelling an order that is already cancelled ' +
      'answers 204 again and changes nothing, so a retry is safe. A `shipped` order cannot be cancelled.',
    pathParameters: {
      orderId: orderIdPathSchema(
        'Identifier of the order to cancel: an int64 written in base 10, as text, so that every digit is kept (also above 2^53 − 1). ' +
          'An optional `-`, then digits; leading zeros are read away (`007` is order 7, `-0` is order 0); at most 64 characters. ' +
          'Anything else (`+7`, `1e3`, `1.0`, beyond int64) is 400 `invalid_order_id`. Send the id as you read it: as text, or from `idStr`.',
        orderIdExamples,
      ),
    },
    success: { status: 204, description: 'The order is cancelled (or already was). No body.' },
    errors: [
      'invalid_order_id',
      'order_not_found',
      'order_already_shipped',
      'order_not_cancellable',
      'service_unavailable',
      'internal_error',
    ],
  },
} satisfies OperationContract;
