import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { functionEnv, readConfig } from '../../shared/config.ts';
import { CursorError, openCursor, sealCursor, type StartKey } from './cursor.ts';
import { cursorKeyRing } from './cursor-keys.ts';
import { callDeadline, createDocumentClient } from '../../shared/dynamo.ts';
import { apiError } from '../../shared/errors.ts';
import { httpMiddleware } from '../../shared/http.ts';
import { type ListQuery, parseListQuery, queryBinding } from './list-query.ts';
import { logger, reportInvalidStoredOrder } from '../../shared/observability.ts';
import { orderToJson } from '../../shared/order-json.ts';
import { readPage } from './page-read.ts';
import { route } from './route.ts';

// Read once per cold start; warm invocations reuse the client's connections.
const config = readConfig(
  functionEnv({ ORDERS_TABLE: true, STAGE_NAME: true, CURSOR_SECRET_ID: true, CURSOR_SECRETS: true, DYNAMODB_ENDPOINT: true }),
);
if ((config.CURSOR_SECRET_ID === undefined) === (config.CURSOR_SECRETS === undefined))
  throw new Error('Invalid configuration: set exactly one of CURSOR_SECRET_ID and CURSOR_SECRETS');
const orders = { client: createDocumentClient({ endpoint: config.DYNAMODB_ENDPOINT }), tableName: config.ORDERS_TABLE };
const cursorKeys = cursorKeyRing(
  config.CURSOR_SECRET_ID === undefined ? { secrets: config.CURSOR_SECRETS! } : { secretId: config.CURSOR_SECRET_ID },
);

/** The parameters a cursor is bound to, and pageSize: what the Link to the next page repeats. */
const linkedParameters = ['pageSize', 'status', 'shipDateFrom', 'shipDateTo', 'part', 'parts'] as const;

/** The start key of the request's cursor; a cursor no key opens makes the keys be read again once (a rotation). */
const startKeyOf = async (query: ListQuery): Promise<StartKey | undefined> => {
  if (query.cursor === undefined) return undefined;
  const expected = { stage: config.STAGE_NAME, binding: queryBinding(query) };
  const open = async () => openCursor(await cursorKeys.keys(), query.cursor!, expected);
  try {
    try {
      return await open();
    } catch (error) {
      if (!(error instanceof CursorError && error.problem === 'invalid_cursor') || !(await cursorKeys.refresh())) throw error;
      return await open();
    }
  } catch (error) {
    if (!(error instanceof CursorError)) throw error;
    logger.info('cursor refused', { problem: error.problem });
    switch (error.problem) {
      case 'invalid_cursor':
        throw apiError('invalid_cursor', error.message);
      case 'cursor_expired':
        throw apiError('cursor_expired', error.message);
      case 'cursor_mismatch':
        throw apiError('cursor_mismatch', error.message);
    }
  }
};

/**
 * `<?…&cursor=…>; rel="next"` (RFC 8288), the request's own parameters repeated. A reference of a
 * query alone resolves against the request's own path (RFC 3986 §5.2.2), so the link is right
 * under a custom domain and under an `execute-api` URL, whose path starts with the stage name.
 */
const nextLink = (event: APIGatewayProxyEvent, cursor: string): string => {
  const parameters = new URLSearchParams();
  for (const name of linkedParameters) {
    const value = event.queryStringParameters?.[name];
    if (value !== undefined) parameters.set(name, value);
  }
  parameters.set('cursor', cursor);
  return `<?${parameters.toString()}>; rel="next"`;
};

/** GET /v2/store/orders: one page of orders, and the cursor of the next one unless it is the last. */
const listPage = async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
  const query = parseListQuery(event.queryStringParameters);
  const startKey = await startKeyOf(query);
  const page = await readPage(orders, query, { startKey, deadline: callDeadline(context), onInvalid: reportInvalidStoredOrder });
  const nextCursor =
    page.nextKey === undefined
      ? undefined
      : sealCursor(await cursorKeys.keys(), { stage: config.STAGE_NAME, binding: queryBinding(query), startKey: page.nextKey });
  logger.info('page read', {
    source: page.source,
    resumed: startKey !== undefined,
    orders: page.orders.length,
    ordersRead: page.ordersRead,
    readCapacityUnits: page.readCapacityUnits,
    last: nextCursor === undefined,
  });
  const body = `{"orders":[${page.orders.map(orderToJson).join(',')}]${nextCursor === undefined ? '' : `,"nextCursor":${JSON.stringify(nextCursor)}`}}`;
  return {
    statusCode: 200,
    headers: { 'Content-Type': 'application/json', ...(nextCursor === undefined ? {} : { Link: nextLink(event, nextCursor) }) },
    body,
  };
};

export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>().use(httpMiddleware(route)).handler(listPage);
