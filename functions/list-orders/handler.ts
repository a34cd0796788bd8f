import { pipeline, Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import middy from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { APIGatewayProxyEvent, Context, StreamifyHandler } from 'aws-lambda';
import { functionEnv, readConfig } from '../../shared/config.ts';
import { callDeadline, type Deadline, createDocumentClient } from '../../shared/dynamo.ts';
import { apiError, listTooLargeMessage } from '../../shared/errors.ts';
import { acceptsGzip, bodyFailure, header, httpMiddleware, resolvedWhenClientLeaves } from '../../shared/http.ts';
import { flushMetrics, logger, metricNames, metrics, recordForVersion, reportInvalidStoredOrder } from '../../shared/observability.ts';
import { orderToJson } from '../../shared/order-json.ts';
import { maxListMs, minBytesPerSecond, releaseMarginMs } from './list-cuts.ts';
import { acquireListLease, type ListLease, releaseListLease } from './list-leases.ts';
import { approximateItemCount, scanOrderPages } from '../../shared/orders-repository.ts';
import { route } from './route.ts';
import { canaryTier, probeListBytes } from '../../shared/probes.ts';
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

/**
 * One of the key's list leases (its tier's LIST_CONCURRENT_PER_KEY), held until the list ends;
 * without one the list is refused with 429 before anything is read.
 */
/** The key the authorizer allowed (its id and tier, from its answer's context). */
const keyOf = (event: APIGatewayProxyEvent) => {
  const authorizer = event.requestContext.authorizer ?? {};
  return {
    keyId: typeof authorizer.principalId === 'string' ? authorizer.principalId : 'unknown',
    tier: typeof authorizer.tier === 'string' ? authorizer.tier : '*',
  };
};

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

/**
 * How a list ends, whichever way it ends (refused after its lease, failed, whole, cut, or its
 * client gone before the first byte): `end()` stops the scan and gives the lease back, once; a
 * later call gets the same promise. A list that was not whole may find DynamoDB failing: its
 * lease gets the short deadline of giveBack's 'after a failure'.
 */
const listEnding = (lease: ListLease | undefined, deadline: Deadline) => {
  let pages: AsyncGenerator<Order[]> | undefined;
  let ended: Promise<void> | undefined;
  return {
    scanning: (scan: AsyncGenerator<Order[]>) => (pages = scan),
    end: (whole = false) =>
      (ended ??= (async () => {
        await pages?.return(undefined);
        await giveBack(lease, whole ? deadline : 'after a failure');
      })()),
  };
};

/** Thrown into a list whose client stopped reading, reads too slowly, or kept it too long: the stream is cut. */
class ClientStalledError extends Error {
  override readonly name = 'ClientStalledError';
}

/** The next Scan page; a failure to read it is the body's own (shared/http.ts bodyFailure): the stream is cut. */
const nextPage = (pages: AsyncGenerator<Order[]>) =>
  pages.next().catch((error: unknown) => {
    throw bodyFailure(error);
  });

/**
 * The JSON array, one chunk per Scan page, written as pages arrive. A failure after the first
 * byte cuts the stream (the envelope in shared/http.ts logs it): the 200 is already sent.
 * `waiting` tells the reader watch a chunk waits for the client (its size), then that it was taken.
 * A probe's list (`maxBytes`: shared/probes.ts probeListBytes) closes the array after the page that
 * reaches its bound, and the scan stops there. However the array ends (whole, bounded, failed, cut,
 * left), the list's `end()` runs before the stream ends, so a frozen or finished function never keeps its lease.
 */
async function* jsonArray(
  first: IteratorResult<Order[]>,
  pages: AsyncGenerator<Order[]>,
  list: {
    startedAt: number;
    maxBytes: number;
    waiting: (bytes: number | false) => void;
    stop: () => void;
    end: (whole?: boolean) => Promise<void>;
  },
) {
  let count = 0;
  let bytes = 0;
  let bounded = false;
  let whole = false;
  try {
    const emit = function* (chunk: string) {
      const size = Buffer.byteLength(chunk);
      bytes += size;
      list.waiting(size);
      yield chunk;
      list.waiting(false);
    };
    yield* emit('[');
    for (let page = first; !page.done; page = await nextPage(pages)) {
      if (page.value.length === 0) continue;
      yield* emit((count === 0 ? '' : ',') + page.value.map(orderToJson).join(','));
      count += page.value.length;
      bounded = bytes >= list.maxBytes;
      if (bounded) break;
    }
    yield* emit(']');
    const durationMs = Math.round(performance.now() - list.startedAt);
    // A probe's bounded list says nothing of what clients' lists count and take.
    if (!bounded) {
      metrics.addMetric(metricNames.ordersListed, 'Count', count);
      metrics.addMetric(metricNames.listDuration, 'Milliseconds', durationMs);
    }
    logger.info('orders listed', { count, durationMs, ...(bounded ? { endedAtProbeBound: list.maxBytes } : {}) });
    whole = true;
  } finally {
    list.waiting(false);
    list.stop();
    await list.end(whole);
    flushMetrics();
  }
}

/**
 * Watches how the client takes `body`, and cuts it: when a chunk has waited LIST_STALL_SECONDS
 * for its client; when, over LIST_STALL_SECONDS of waiting, the client took less than
 * minBytesPerSecond; or when the list has run maxListMs. The scan stops (the generator's finally),
 * and the log says so. A client's stall is counted in StalledListsCut, which carries the invocation's
 * start as its time, the time Lambda gives the invocation's Errors datapoint, so that ListOrdersErrors
 * (Errors less StalledListsCut) subtracts it in the same period. A list that ran maxListMs is the
 * version's doing (a Scan that never ends), not its client's: ListsRanTooLong, never subtracted.
 */
const readerWatch = (startedAt: number, invokedAt: number, remainingMs: number) => {
  const windowMs = config.LIST_STALL_SECONDS * 1000;
  let timer: NodeJS.Timeout | undefined;
  let body: Readable | undefined;
  let waitingSince: number | undefined;
  let pendingBytes = 0;
  let waitedMs = 0;
  let takenBytes = 0;
  const cut = (message: string, reason: string, fields: Record<string, number> = {}, ranTooLong = false) => {
    stop();
    if (body === undefined || body.destroyed) return;
    // Per version: ListOrdersErrors judges the new version's Errors less its clients' stalls (dated
    // as Lambda dates the Errors datapoint), plus the lists that ran too long (dated now: the
    // version's own failure, seen as soon as it happens).
    if (ranTooLong) recordForVersion('listOrders', { [metricNames.listsRanTooLong]: 1 });
    else recordForVersion('listOrders', { [metricNames.stalledListsCut]: 1 }, invokedAt);
    logger.warn(message, { reason, ...fields, durationMs: Math.round(performance.now() - startedAt) });
    body.destroy(bodyFailure(new ClientStalledError(reason)));
  };
  const tooLong = setTimeout(
    () => cut('list cut: it ran too long', `the list ran ${Math.round((performance.now() - startedAt) / 1000)} s, its limit`, {}, true),
    Math.max(0, Math.min(maxListMs, remainingMs - releaseMarginMs)),
  );
  const stop = () => {
    clearTimeout(timer);
    clearTimeout(tooLong);
  };
  /** A chunk was taken: its waiting time and bytes count towards the client's rate. */
  const taken = () => {
    if (waitingSince === undefined) return;
    waitedMs += performance.now() - waitingSince;
    takenBytes += pendingBytes;
    waitingSince = undefined;
    if (waitedMs < windowMs) return;
    const bytesPerSecond = Math.round(takenBytes / (waitedMs / 1000));
    if (bytesPerSecond < minBytesPerSecond)
      return cut('list cut: the client reads too slowly', `the client took ${bytesPerSecond} bytes/s, below ${minBytesPerSecond}`, {
        bytesPerSecond,
        minBytesPerSecond,
      });
    waitedMs = 0;
    takenBytes = 0;
  };
  return {
    attach: (readable: Readable) => (body = readable),
    stop,
    /** `bytes`: a chunk of that size waits for the client; `false`: it was taken. */
    waiting: (bytes: number | false) => {
      clearTimeout(timer);
      timer = undefined;
      if (bytes === false) return taken();
      waitingSince = performance.now();
      pendingBytes = bytes;
      timer = setTimeout(
        () =>
          cut('list cut: the client stopped reading', `the client took nothing for ${config.LIST_STALL_SECONDS} s`, {
            stallSeconds: config.LIST_STALL_SECONDS,
          }),
        windowMs,
      );
    },
  };
};

/** GET /v1/store/orders: every order, streamed (query parameters are ignored in v1). */
const listOrders = async (event: APIGatewayProxyEvent, context: Context) => {
  const invokedAt = Date.now();
  const startedAt = performance.now();
  const gzip = acceptsGzip(header(event.headers, 'accept-encoding'));
  const deadline = callDeadline(context);
  const ending = listEnding(await takeLease(event, context, deadline), deadline);
  let pages: AsyncGenerator<Order[]>;
  let first: IteratorResult<Order[]>;
  try {
    await checkListFits(gzip, deadline);
    pages = ending.scanning(
      scanOrderPages(orders, {
        segments: config.SCAN_SEGMENTS,
        pageSize: config.SCAN_PAGE_SIZE,
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
  const reader = readerWatch(startedAt, invokedAt, context.getRemainingTimeInMillis());
  // One page of JSON text held ahead of a slow client at most (objectMode holds 16 by default).
  const maxBytes = keyOf(event).tier === canaryTier ? probeListBytes : Infinity;
  const json = Readable.from(
    jsonArray(first, pages, { startedAt, maxBytes, waiting: reader.waiting, stop: reader.stop, end: ending.end }),
    {
      highWaterMark: 1,
    },
  );
  reader.attach(json);
  // A body destroyed before it was first read (its client left first) never runs the array's own
  // cleanup; once it ran, this is the same end.
  json.once('close', () => {
    reader.stop();
    void ending.end();
  });
  // A response stream already closed when the body is piped into it refuses the pipe and leaves
  // the body as it is (no 'close'): the invocation's end destroys it and waits for the release.
  listEnds.set(context, () => {
    json.destroy();
    return ending.end();
  });
  const headers = { 'Content-Type': 'application/json', Vary: 'Accept-Encoding', ...(gzip ? { 'Content-Encoding': 'gzip' } : {}) };
  return { statusCode: 200, headers, body: gzip ? pipeline(json, createGzip(), () => undefined) : json };
};

/**
 * The end of each list under way, by its invocation's context. middy calls `requestEnd` once the
 * body's pipe into the response stream has settled, however it settled (whole, cut, refused by a
 * stream already closed, broken by a client gone mid-list): the list's lease is released before
 * the invocation returns, so a function frozen after it never keeps one.
 */
const listEnds = new WeakMap<Context, () => Promise<void>>();

const endOfInvocation = async (request: { context: Context }) => {
  const end = listEnds.get(request.context);
  listEnds.delete(request.context);
  await end?.();
};

const streamed = middy<APIGatewayProxyEvent, { statusCode: number; headers: Record<string, string>; body: Readable }>({
  executionMode: executionModeStreamifyResponse,
  requestEnd: endOfInvocation,
})
  .use(httpMiddleware(route))
  .handler(listOrders);

// middy's types describe the buffered signature; in streaming mode its handler takes the response stream.
export const handler = resolvedWhenClientLeaves(streamed as unknown as StreamifyHandler<APIGatewayProxyEvent, void>);
