import { pipeline, Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import middy from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { functionEnv, readConfig } from '../shared/config.ts';
import { callDeadline, type Deadline, createDocumentClient } from '../shared/dynamo.ts';
import { apiError, listTooLargeMessage } from '../shared/errors.ts';
import { acceptsGzip, header, httpMiddleware } from '../shared/http.ts';
import { flushMetrics, logger, metricNames, metrics } from '../shared/observability.ts';
import { orderToJson } from '../shared/order-json.ts';
import { approximateItemCount, type InvalidItemReport, scanOrderPages } from '../shared/orders-repository.ts';
import { routeOf } from '../shared/routes.ts';
import type { Order } from '../shared/schemas.ts';

// Read once per cold start; warm invocations reuse the client's connections.
const config = readConfig(
  functionEnv({
    ORDERS_TABLE: true,
    SCAN_SEGMENTS: true,
    SCAN_PAGE_SIZE: true,
    LIST_MAX_ORDERS: true,
    LIST_MAX_ORDERS_GZIP: true,
    DYNAMODB_ENDPOINT: true,
  }),
);
const orders = { client: createDocumentClient({ endpoint: config.DYNAMODB_ENDPOINT }), tableName: config.ORDERS_TABLE };

// DynamoDB refreshes ItemCount about every six hours: asking once every few minutes is plenty.
const itemCountTtlMs = 5 * 60_000;
let itemCount: { value: number; readAt: number } | undefined;

/** Refuses, before the first byte, a list that could not fit in one response (see README, "Limits of the deployed list"). */
const checkListFits = async (gzip: boolean, deadline: Deadline) => {
  if (itemCount === undefined || performance.now() - itemCount.readAt > itemCountTtlMs) {
    itemCount = { value: await approximateItemCount(orders, deadline), readAt: performance.now() };
  }
  if (itemCount.value <= (gzip ? config.LIST_MAX_ORDERS_GZIP : config.LIST_MAX_ORDERS)) return;
  logger.warn('list refused: too many orders for one response', { itemCount: itemCount.value, gzip });
  throw apiError(
    'list_too_large',
    listTooLargeMessage(itemCount.value, gzip, { plain: config.LIST_MAX_ORDERS, gzip: config.LIST_MAX_ORDERS_GZIP }),
  );
};

const reportInvalid = (report: InvalidItemReport) => {
  metrics.addMetric(metricNames.invalidStoredOrders, 'Count', 1);
  logger.warn('stored order breaks the table contract', { ...report });
};

/**
 * The JSON array, one chunk per Scan page, written as pages arrive. A failure after the first
 * byte cuts the stream (the envelope in shared/http.ts logs it): the 200 is already sent.
 */
async function* jsonArray(first: IteratorResult<Order[]>, pages: AsyncGenerator<Order[]>, startedAt: number) {
  let count = 0;
  try {
    yield '[';
    for (let page = first; !page.done; page = await pages.next()) {
      if (page.value.length === 0) continue;
      yield (count === 0 ? '' : ',') + page.value.map(orderToJson).join(',');
      count += page.value.length;
    }
    yield ']';
    metrics.addMetric(metricNames.ordersListed, 'Count', count);
    metrics.addMetric(metricNames.listDuration, 'Milliseconds', performance.now() - startedAt);
    logger.info('orders listed', { count, durationMs: Math.round(performance.now() - startedAt) });
  } finally {
    await pages.return(undefined);
    flushMetrics();
  }
}

/** GET /v1/store/orders: every order, streamed (query parameters are ignored in v1). */
const listOrders = async (event: APIGatewayProxyEvent, context: Context) => {
  const startedAt = performance.now();
  const gzip = acceptsGzip(header(event.headers, 'accept-encoding'));
  const deadline = callDeadline(context);
  await checkListFits(gzip, deadline);
  const pages = scanOrderPages(orders, {
    segments: config.SCAN_SEGMENTS,
    pageSize: config.SCAN_PAGE_SIZE,
    onInvalid: reportInvalid,
    // Each Scan page has its own deadline: a hang mid-list cuts the stream within seconds.
    deadline,
  });
  // Waiting for the first page lets a failure still answer with an Error record and its status.
  const first = await pages.next();
  metrics.addMetric(metricNames.listFirstByte, 'Milliseconds', performance.now() - startedAt);
  // One page of JSON text held ahead of a slow client at most (objectMode holds 16 by default).
  const json = Readable.from(jsonArray(first, pages, startedAt), { highWaterMark: 1 });
  const headers = { 'Content-Type': 'application/json', Vary: 'Accept-Encoding', ...(gzip ? { 'Content-Encoding': 'gzip' } : {}) };
  return { statusCode: 200, headers, body: gzip ? pipeline(json, createGzip(), () => undefined) : json };
};

export const handler = middy<APIGatewayProxyEvent, { statusCode: number; headers: Record<string, string>; body: Readable }>({
  executionMode: executionModeStreamifyResponse,
})
  .use(httpMiddleware(routeOf('listOrders')))
  .handler(listOrders);
