import { Readable } from 'node:stream';
import type { Context } from 'aws-lambda';
import { bodyFailure } from '../../shared/http.ts';
import { flushMetrics, logger, metricNames, metrics, recordForVersion } from '../../shared/observability.ts';
import { orderToJson } from '../../shared/order-json.ts';
import type { Order } from '../../shared/schemas.ts';
import { maxListMs, minBytesPerSecond, releaseMarginMs } from './list-cuts.ts';

// The v1 list's stream (functions/list-orders/handler.ts): the Scan pages written as one JSON
// array, a watch on how its client takes them, and the one end every list reaches however it ends.

/**
 * How a list ends, whichever way it ends (refused after its lease, failed, whole, cut, or its
 * client gone before the first byte): `end()` stops the scan and then calls `release` (the lease's
 * release, told whether the list was whole), once; a later call gets the same promise.
 */
export const listEnding = (release: (whole: boolean) => Promise<void>) => {
  let pages: AsyncGenerator<Order[]> | undefined;
  let ended: Promise<void> | undefined;
  return {
    scanning: (scan: AsyncGenerator<Order[]>) => (pages = scan),
    end: (whole = false) =>
      (ended ??= (async () => {
        await pages?.return(undefined);
        await release(whole);
      })()),
  };
};

export type ListEnding = ReturnType<typeof listEnding>;

/** Thrown into a list whose client stopped reading, reads too slowly, or kept it too long: the stream is cut. */
export class ClientStalledError extends Error {
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
export async function* jsonArray(
  first: IteratorResult<Order[]>,
  pages: AsyncGenerator<Order[]>,
  list: {
    startedAt: number;
    maxBytes: number;
    waiting: (bytes: number | false) => void;
    stop: () => void;
    end: (whole?: boolean) => Promise<void>;
    /** Each order also carries its ids as text (`stringIds=true`). */
    stringIds: boolean;
  },
) {
  const toJson = (order: Order) => orderToJson(order, list.stringIds);
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
      yield* emit((count === 0 ? '' : ',') + page.value.map(toJson).join(','));
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
 * Watches how the client takes `body`, and cuts it: when a chunk has waited `stallSeconds`
 * (LIST_STALL_SECONDS) for its client; when, over `stallSeconds` of waiting, the client took less
 * than minBytesPerSecond; or when the list has run maxListMs. The scan stops (the generator's finally),
 * and the log says so. A client's stall is counted in StalledListsCut, which carries the invocation's
 * start as its time, the time Lambda gives the invocation's Errors datapoint, so that ListOrdersErrors
 * (Errors less StalledListsCut) subtracts it in the same period. A list that ran maxListMs is the
 * version's doing (a Scan that never ends), not its client's: ListsRanTooLong, never subtracted.
 */
export const readerWatch = (watch: { startedAt: number; invokedAt: number; remainingMs: number; stallSeconds: number }) => {
  const { startedAt, invokedAt, stallSeconds } = watch;
  const windowMs = stallSeconds * 1000;
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
    Math.max(0, Math.min(maxListMs, watch.remainingMs - releaseMarginMs)),
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
        () => cut('list cut: the client stopped reading', `the client took nothing for ${stallSeconds} s`, { stallSeconds }),
        windowMs,
      );
    },
  };
};

/**
 * The end of each list under way, by its invocation's context. middy calls `requestEnd` once the
 * body's pipe into the response stream has settled, however it settled (whole, cut, refused by a
 * stream already closed, broken by a client gone mid-list): the list's lease is released before
 * the invocation returns, so a function frozen after it never keeps one.
 */
const listEnds = new WeakMap<Context, () => Promise<void>>();

/** middy's `requestEnd` for the list: ends the invocation's list, if one is under way. */
export const endOfInvocation = async (request: { context: Context }) => {
  const end = listEnds.get(request.context);
  listEnds.delete(request.context);
  await end?.();
};

/**
 * The list's body, from its first page on: the JSON array under the reader watch, ended by
 * whichever comes first of its own end, its close, and the invocation's end (endOfInvocation).
 */
export const listBody = (
  first: IteratorResult<Order[]>,
  pages: AsyncGenerator<Order[]>,
  list: {
    context: Context;
    ending: ListEnding;
    startedAt: number;
    invokedAt: number;
    stallSeconds: number;
    maxBytes: number;
    stringIds: boolean;
  },
): Readable => {
  const { context, ending, startedAt, maxBytes, stringIds } = list;
  const reader = readerWatch({ ...list, remainingMs: context.getRemainingTimeInMillis() });
  // One page of JSON text held ahead of a slow client at most (objectMode holds 16 by default).
  const json = Readable.from(
    jsonArray(first, pages, { startedAt, maxBytes, waiting: reader.waiting, stop: reader.stop, end: ending.end, stringIds }),
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
  return json;
};
