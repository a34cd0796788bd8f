import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { functionEnv, readConfig } from '../../shared/config.ts';
import { callDeadline, createDocumentClient } from '../../shared/dynamo.ts';
import { apiError, notCancellableMessage } from '../../shared/errors.ts';
import { httpMiddleware } from '../../shared/http.ts';
import { logger, metricNames, metrics } from '../../shared/observability.ts';
import { parseOrderId } from './order-id.ts';
import { cancelOrder } from './cancel-update.ts';
import { route } from './route.ts';
import { canaryTier, idThatCannotExist, isProbeOrderId } from '../../shared/probes.ts';

// Read once per cold start; warm invocations reuse the client's connections.
const config = readConfig(functionEnv({ ORDERS_TABLE: true, DYNAMODB_ENDPOINT: true }));
const orders = { client: createDocumentClient({ endpoint: config.DYNAMODB_ENDPOINT }), tableName: config.ORDERS_TABLE };

/** DELETE /v1/store/orders/{orderId}: 204 once the order is cancelled (again 204 on a repeat). */
const cancel = async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
  const orderId = parseOrderId(event.pathParameters?.orderId);
  logger.appendKeys({ order_id: orderId });
  // The probes' key (its tier from the authorizer) cancels only the probes' own orders, and int64's
  // minimum (reserved, never an order: the probes' absent order, read through the table like any):
  // code that holds it, in the synthetic client or the pre-traffic hook, reaches no client's order.
  const probesOwn = isProbeOrderId(orderId) || orderId === idThatCannotExist;
  if (event.requestContext.authorizer?.tier === canaryTier && !probesOwn) {
    metrics.addMetric(metricNames.ordersNotFound, 'Count', 1);
    throw apiError('order_not_found');
  }
  // A hung DynamoDB ends in 503 within the call's deadline, well before this function's timeout.
  const result = await cancelOrder(orders, orderId, { deadline: callDeadline(context) });
  switch (result.outcome) {
    case 'cancelled':
      metrics.addMetric(metricNames.ordersCancelled, 'Count', 1);
      logger.info('order cancelled');
      return { statusCode: 204, headers: {}, body: '' };
    case 'already_cancelled':
      logger.info('order was already cancelled');
      return { statusCode: 204, headers: {}, body: '' };
    case 'not_found':
      metrics.addMetric(metricNames.ordersNotFound, 'Count', 1);
      throw apiError('order_not_found');
    case 'not_cancellable':
      metrics.addMetric(metricNames.cancelConflicts, 'Count', 1);
      if (result.status === 'shipped') throw apiError('order_already_shipped');
      throw apiError('order_not_cancellable', notCancellableMessage(result.status));
  }
};

export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>().use(httpMiddleware(route)).handler(cancel);
