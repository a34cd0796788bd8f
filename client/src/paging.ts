/**
 * The v2 list beyond single pages: order by order with a checkpoint after each page, collected
 * up to a cap, and split into parts read at a set concurrency as one stream. Built on a page
 * source (the client's `listOrderPages`), so each page keeps its own retries and timeout.
 */
import type { operations } from './generated/openapi.ts';
import type { Order, OrderPage } from './order.ts';
import type { CallOptions } from './http.ts';

/** Order statuses the v2 list filters on: the `status` parameter's values in the OpenAPI document. */
export type OrderStatus = NonNullable<NonNullable<operations['listOrdersPaged']['parameters']['query']>['status']>;

/**
 * The v2 list's bounds the client applies before it asks, as the service's OpenAPI document
 * states them (pageSize's default, parts' maximum). The client cannot import the service's code:
 * test/docs/v2-bounds.test.ts compares these, and the comments below, with the document.
 */
export const v2Bounds = { defaultPageSize: 100, maxParts: 16 } as const;

/** The v2 list's query (docs/api.md): every field optional. */
export type OrderPageQuery = {
  status?: OrderStatus | undefined;
  /** Orders with `shipDate >= shipDateFrom` (an RFC 3339 date-time, or a Date). */
  shipDateFrom?: string | Date | undefined;
  /** Orders with `shipDate < shipDateTo`. */
  shipDateTo?: string | Date | undefined;
  /** Orders per page, 1..1000 (the service's default: 100). A page may hold fewer. */
  pageSize?: number | undefined;
  /** Resume after the page whose `cursor` this is; send the same filters and part with it. */
  cursor?: string | undefined;
  /** A split read: part `part` (1-based) of `parts` (1..16); both or neither. */
  part?: number | undefined;
  parts?: number | undefined;
};

/** Where a read stands after a page: `cursor` resumes after it; null once the read (or the part) is done. */
export type Checkpoint = {
  cursor: string | null;
  /** Orders in the page just done. */
  orders: number;
  /** In a split read, the part the page belongs to, of `parts`. */
  part?: number | undefined;
  parts?: number | undefined;
};

export type PagedOptions = {
  /** Awaited after each page's orders were all taken, before the next page is asked for. */
  onPage?: ((checkpoint: Checkpoint) => void | Promise<void>) | undefined;
};

/** A bound on a v2 read for callers who want one (a read never loops on a repeated cursor, whatever this says). */
export type ReadLimits = {
  /** The most pages a read takes (per part, in a split read); past them it throws `PageLimitError`, whose `cursor` resumes it. Default: none. */
  maxPages?: number | undefined;
};

export type CollectOptions = {
  /** The most orders to collect (1 or more): the read stops once it has them. */
  limit: number;
};

export type SplitReadOptions = PagedOptions & {
  /** Parts of the split, 1..16. */
  parts: number;
  /** Parts read at once (default: all of them). */
  concurrency?: number | undefined;
  /** Where each part resumes, from its last checkpoint: a cursor, or null for a part already done. A part not named starts at its beginning. */
  cursors?: Readonly<Record<number, string | null>> | undefined;
};

type PageSource = (query: OrderPageQuery & CallOptions & ReadLimits) => AsyncGenerator<OrderPage, void, undefined>;

/** Each order of each page; `onPage` after the last order of a page was taken. */
export async function* pagedOrders(
  pages: PageSource,
  query: OrderPageQuery & CallOptions & PagedOptions & ReadLimits,
): AsyncGenerator<Order, void, undefined> {
  const { onPage, ...pageQuery } = query;
  for await (const page of pages(pageQuery)) {
    yield* page.orders;
    await onPage?.(checkpointOf(page, query));
  }
}

const checkpointOf = (page: OrderPage, query: OrderPageQuery): Checkpoint => ({
  cursor: page.cursor ?? null,
  orders: page.orders.length,
  ...(query.part === undefined ? {} : { part: query.part, parts: query.parts }),
});

/** At most `limit` orders; the read stops once it has them (and a cap under 100 is also the page size, unless one is given). */
export const collect = async (pages: PageSource, query: OrderPageQuery & CallOptions & CollectOptions & ReadLimits): Promise<Order[]> => {
  const { limit, ...pageQuery } = query;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError(`limit must be an integer of 1 or more, got ${limit}`);
  const orders: Order[] = [];
  if (pageQuery.pageSize === undefined && limit < v2Bounds.defaultPageSize) pageQuery.pageSize = limit;
  for await (const order of pagedOrders(pages, pageQuery)) if (orders.push(order) >= limit) break;
  return orders;
};

const checkSplit = (parts: number, concurrency: number) => {
  if (!Number.isInteger(parts) || parts < 1 || parts > v2Bounds.maxParts)
    throw new TypeError(`parts must be an integer 1..${v2Bounds.maxParts}, got ${parts}`);
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new TypeError(`concurrency must be an integer of 1 or more, got ${concurrency}`);
};

type Running = {
  part: number;
  pages: AsyncGenerator<OrderPage, void, undefined>;
  next: Promise<{ part: number; result: IteratorResult<OrderPage> }>;
};

/**
 * Parts 1…`parts` of a split read, at most `concurrency` at once, as one stream of orders in the
 * order pages arrive. Each part asks for its next page once its last page's orders were taken and
 * its checkpoint was saved, so memory holds at most one page per running part. The first failure
 * of any part ends the read (the other parts' requests are aborted) and is thrown.
 */
export async function* splitRead(
  pages: PageSource,
  options: SplitReadOptions & Omit<OrderPageQuery, 'part' | 'parts' | 'cursor'> & CallOptions & ReadLimits,
): AsyncGenerator<Order, void, undefined> {
  const { parts, concurrency = parts, cursors = {}, onPage, signal, ...query } = options;
  checkSplit(parts, concurrency);
  // One signal for every part: aborted when the read ends early, so no request outlives it.
  const stop = new AbortController();
  const onCallerAbort = () => stop.abort(signal?.reason);
  if (signal?.aborted) onCallerAbort();
  else signal?.addEventListener('abort', onCallerAbort, { once: true });
  const waiting = Array.from({ length: parts }, (_, i) => i + 1).filter((part) => cursors[part] !== null);
  const running = new Map<number, Running>();
  const start = (part: number) => {
    const partPages = pages({ ...query, part, parts, cursor: cursors[part] ?? undefined, signal: stop.signal });
    const run: Running = { part, pages: partPages, next: advance(part, partPages) };
    running.set(part, run);
  };
  try {
    while (running.size < concurrency && waiting.length > 0) start(waiting.shift()!);
    while (running.size > 0) {
      const { part, result } = await Promise.race([...running.values()].map((run) => run.next));
      const run = running.get(part)!;
      if (result.done) {
        running.delete(part);
        if (waiting.length > 0) start(waiting.shift()!);
        continue;
      }
      yield* result.value.orders;
      await onPage?.(checkpointOf(result.value, { part, parts }));
      run.next = advance(part, run.pages);
    }
  } finally {
    signal?.removeEventListener('abort', onCallerAbort);
    stop.abort(new DOMException('The split read ended', 'AbortError'));
    // Pending page requests reject with the abort: nobody waits for them, and they must not go unhandled.
    for (const run of running.values()) run.next.catch(() => undefined);
  }
}

const advance = (part: number, pages: AsyncGenerator<OrderPage, void, undefined>) => pages.next().then((result) => ({ part, result }));
