import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { functionEnv, readConfig } from '../../shared/config.ts';
import { pageCursors } from './cursor-keys.ts';
import { callDeadline, createDocumentClient } from '../../shared/dynamo.ts';
import { httpMiddleware } from '../../shared/http.ts';
import { type ListQuery, parseListQuery } from './list-query.ts';
import { logger, reportInvalidStoredOrder } from '../../shared/observability.ts';
import { orderToJson } from '../../shared/order-json.ts';
import { readPage } from './page-read.ts';
import { route } from './route.ts';
import type { Order } from '../../shared/schemas.ts';

// Read once per cold start; warm invocations reuse the client's connections.
const config = readConfig(
  functionEnv({ ORDERS_TABLE: true, STAGE_NAME: true, CURSOR_SECRET_ID: true, CURSOR_SECRETS: true, DYNAMODB_ENDPOINT: true }),
);
if ((config.CURSOR_SECRET_ID === undefined) === (config.CURSOR_SECRETS === undefined))
  throw new Error('Invalid configuration: set exactly one of CURSOR_SECRET_ID and CURSOR_SECRETS');
const orders = { client: createDocumentClient({ endpoint: config.DYNAMODB_ENDPOINT }), tableName: config.ORDERS_TABLE };
const cursors = pageCursors(
  config.STAGE_NAME,
  config.CURSOR_SECRET_ID === undefined ? { secrets: config.CURSOR_SECRETS! } : { secretId: config.CURSOR_SECRET_ID },
);

/**
 * `<?…&cursor=…>; rel="next"` (RFC 8288), the request's own parameters repeated. A reference of a
 * query alone resolves against the request's own path (RFC 3986 §5.2.2), so the link is right
 * under a custom domain and under an `execute-api` URL, whose path starts with the stage name.
 */
const nextLink = (query: ListQuery, cursor: string): string =>
  `<?${new URLSearchParams([...query.linked, ['cursor', cursor]]).toString()}>; rel="next"`;

/** The page as the client reads it: its orders and, unless it is the last, the next cursor (in the body and the Link). */
const pageAnswer = (query: ListQuery, listed: readonly Order[], nextCursor: string | undefined): APIGatewayProxyResult => {
  const body = `{"orders":[${listed.map((order) => orderToJson(order, query.stringIds)).join(',')}]${nextCursor === undefined ? '' : `,"nextCursor":${JSON.stringify(nextCursor)}`}}`;
  return {
    statusCode: 200,
    headers: { 'Content-Type': 'application/json', ...(nextCursor === undefined ? {} : { Link: nextLink(query, nextCursor) }) },
    body,
  };
};

/** GET /v2/store/orders: the query parsed, its cursor opened, one page read, the next page's cursor sealed. */
const listPage = async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
  const query = parseListQuery(event.queryStringParameters);
  const startKey = await cursors.open(query);
  const page = await readPage(orders, query, { startKey, deadline: callDeadline(context), onInvalid: reportInvalidStoredOrder });
  const nextCursor = await cursors.seal(query, page.nextKey);
  logger.info('page read', {
    source: page.source,
    resumed: startKey !== undefined,
    orders: page.orders.length,
    ordersRead: page.ordersRead,
    readCapacityUnits: page.readCapacityUnits,
    last: nextCursor === undefined,
  });
  return pageAnswer(query, page.orders, nextCursor);
};

export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>().use(httpMiddleware(route)).handler(listPage);
