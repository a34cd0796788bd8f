import { pipeline, type Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import middy from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { APIGatewayProxyEvent, Context, StreamifyHandler } from 'aws-lambda';
import { functionEnv, readConfig } from '../../shared/config.ts';
import { callDeadline, type Deadline, createDocumentClient } from '../../shared/dynamo.ts';
import { apiError, listTooLargeMessage } from '../../shared/errors.ts';
import { acceptsGzip, header, httpMiddleware, resolvedWhenClientLeaves } from '../../shared/http.ts';
import { logger, metricNames, metrics, reportInvalidStoredOrder } from '../../shared/observability.ts';
import { acquireListLease, type ListLease, releaseListLease } from './list-leases.ts';
import { endOfInvocation, listBody, listEnding } from './list-stream.ts';
import { listMaxOrdersOf } from './list-size.ts';
import { stringIdsParameter } from '../../shared/order-json.ts';
import { approximateItemCount, scanOrderPages } from './orders-scan.ts';
import { route } from './route.ts';
import { canaryTier, probeListBytes, probeScanPageSize } from '../../shared/probes.ts';
import type { Order } from '../../shared/schemas.ts';

// Read once per cold start; warm invocations reuse the client's connections.
const config = readConfig(
  functionEnv({
    ORDERS_TABLE: true,
    SCAN_SEGMENTS: true,
    SCAN_PAGE_SIZE: true,
    LIST_MAX_ORDERS: true,
    LIST_MAX_ORDERS_GZIP: true,
    LIST_LEASES_TABLE: true,
    LIST_CONCURRENT_PER_KEY: true,
    LIST_STALL_SECONDS: true,
    DYNAMODB_ENDPOINT: true,
  }),
);
const client = createDocumentClient({ endpoint: config.DYNAMODB_ENDPOINT });
const orders = { client, tableName: config.ORDERS_TABLE };
const leases = { client, tableName: config.LIST_LEASES_TABLE };

// DynamoDB refreshes ItemCount about every six hours: asking once every few minutes is plenty.
const itemCountTtlMs = 5 * 60_000;
let itemCount: { value: number; readAt: number } | undefined;

/** Refuses, before the first byte, a list that could not fit in one response (see docs/api.md#limits-of-the-deployed-list). */
const checkListFits = async (gzip: boolean, stringIds: boolean, deadline: Deadline) => {
  if (itemCount === undefined || performance.now() - itemCount.readAt > itemCountTtlMs) {
    itemCount = { value: await approximateItemCount(orders, deadline), readAt: performance.now() };
  }
  const limits = listMaxOrdersOf({ plain: config.LIST_MAX_ORDERS, gzip: config.LIST_MAX_ORDERS_GZIP }, stringIds);
  if (itemCount.value <= (gzip ? limits.gzip : limits.plain)) return;
  logger.warn('list refused: too many orders for one response', { itemCount: itemCount.value, gzip, stringIds });
  throw apiError('list_too_large', listTooLargeMessage(itemCount.value, gzip, limits));
};

/** The key the authorizer allowed (its id and tier, from its answer's context). */
const keyOf = (event: APIGatewayProxyEvent) => {
  const authorizer = event.requestContext.authorizer ?? {};
  return {
    keyId: typeof authorizer.principalId === 'string' ? authorizer.principalId : 'unknown',
    tier: typeof authorizer.tier === 'string' ? authorizer.tier : '*',
  };
};

/**
 * One of the key's list leases (its tier's LIST_CONCURRENT_PER_KEY), held until the list ends;
 * without one the list is refused with 429 before anything is read.
 */
const takeLease = async (event: APIGatewayProxyEvent, context: Context, deadline: Deadline): Promise<ListLease | undefined> => {
  const { keyId, tier } = keyOf(event);
  const slots = config.LIST_CONCURRENT_PER_KEY.get(tier) ?? config.LIST_CONCURRENT_PER_KEY.get('*')!;
  // The local developer's tier: no per-key bound, only the stage's.
  if (slots === 'none') return undefined;
  // Past the function's own time: a list stopped at its timeout cannot delete its lease.
  const expiresAt = new Date(Date.now() + context.getRemainingTimeInMillis() + 60_000);
  const lease = await acquireListLease(leases, { keyId, holder: context.awsRequestId, slots, expiresAt, deadline });
  if (lease !== undefined) return lease;
  metrics.addMetric(metricNames.listsRefusedPerKey, 'Count', 1);
  logger.info("list refused: the key runs its tier's lists at once already", { key_id: keyId, tier, concurrentLists: slots });
  throw apiError('too_many_requests', `This key already runs ${slots} lists at once, its limit: retry once one of them has ended.`);
};

/**
 * Gives the lease back; one that cannot be deleted now expires with the function's time, so a
 * failure is logged and nothing more. After a failure, DynamoDB may be what failed: the delete
 * then gets a second at most, so that the client's answer (or cut) does not wait for it.
 */
const giveBack = async (lease: ListLease | undefined, deadline: Deadline | 'after a failure') => {
  if (lease === undefined) return;
  const bounded = deadline === 'after a failure' ? () => ({ abortSignal: AbortSignal.timeout(1_000), requestTimeout: 1_000 }) : deadline;
  await releaseListLease(leases, lease, bounded).catch((error: unknown) => logger.warn('list lease not released', { error }));
};

/** GET /v1/store/orders: every order, streamed (`stringIds` is the one query parameter v1 reads). */
const listOrders = async (event: APIGatewayProxyEvent, context: Context) => {
  const invokedAt = Date.now();
  const startedAt = performance.now();
  // Only `true` asks; any other value is ignored, as v1 ignores every parameter it does not read
  // (a request that worked before the parameter existed still does: v1 changes are additive).
  const stringIds = event.queryStringParameters?.[stringIdsParameter] === 'true';
  const gzip = acceptsGzip(header(event.headers, 'accept-encoding'));
  const deadline = callDeadline(context);
  const probe = keyOf(event).tier === canaryTier;
  const lease = await takeLease(event, context, deadline);
  // A list that was not whole may find DynamoDB failing: its lease gets giveBack's short deadline.
  const ending = listEnding((whole) => giveBack(lease, whole ? deadline : 'after a failure'));
  let pages: AsyncGenerator<Order[]>;
  let first: IteratorResult<Order[]>;
  try {
    await checkListFits(gzip, stringIds, deadline);
    pages = ending.scanning(
      scanOrderPages(orders, {
        segments: config.SCAN_SEGMENTS,
        // A probe's bounded list spans several pages of each segment, so that it exercises paging.
        pageSize: probe ? Math.min(config.SCAN_PAGE_SIZE, probeScanPageSize) : config.SCAN_PAGE_SIZE,
        onInvalid: reportInvalidStoredOrder,
        // Each Scan page has its own deadline: a hang mid-list cuts the stream within seconds.
        deadline,
      }),
    );
    // Waiting for the first page lets a failure still answer with an Error record and its status.
    first = await pages.next();
  } catch (error) {
    await ending.end();
    throw error;
  }
  metrics.addMetric(metricNames.listFirstByte, 'Milliseconds', performance.now() - startedAt);
  // A probe's list stops at its bound (shared/probes.ts); a client's list is whole.
  const maxBytes = probe ? probeListBytes : Infinity;
  const stallSeconds = config.LIST_STALL_SECONDS;
  const json = listBody(first, pages, { context, ending, startedAt, invokedAt, stallSeconds, maxBytes, stringIds });
  const headers = { 'Content-Type': 'application/json', Vary: 'Accept-Encoding', ...(gzip ? { 'Content-Encoding': 'gzip' } : {}) };
  return { statusCode: 200, headers, body: gzip ? pipeline(json, createGzip(), () => undefined) : json };
};

const streamed = middy<APIGatewayProxyEvent, { statusCode: number; headers: Record<string, string>; body: Readable }>({
  executionMode: executionModeStreamifyResponse,
  requestEnd: endOfInvocation,
})
  .use(httpMiddleware(route))
  .handler(listOrders);

// middy's types describe the buffered signature; in streaming mode its handler takes the response stream.
export const handler = resolvedWhenClientLeaves(streamed as unknown as StreamifyHandler<APIGatewayProxyEvent, void>);
