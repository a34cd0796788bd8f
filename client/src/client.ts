/**
 * `StoreOrdersClient`: the v1 list streamed, the v2 list in pages or order by order (split reads
 * included), and the cancel, with exact int64 ids, Error records as `StoreOrdersError`s, retries
 * that respect `Retry-After`, redirects refused, hooks that see every request, and bounds on
 * everything a server sends (time, size, pages), the key kept out of every error.
 */
import { readBody } from './bounds.ts';
import { InvalidResponseError, PageLimitError, StoreOrdersError } from './errors.ts';
import { errorBodyBytes } from './failures.ts';
import type { CallMeta, Hooks, Operation } from './hooks.ts';
import { type CallOptions, type RetryOptions, callSignal, defaultRetry, exchange } from './http.ts';
import { JsonSyntaxError } from './json.ts';
import { parseOrdersJson } from './orders-json.ts';
import { invalidResponse, isOrderLike, readListBody } from './list-stream.ts';
import { type Order, type OrderPage, int64Keys } from './order.ts';
import {
  type CollectOptions,
  type OrderPageQuery,
  type PagedOptions,
  type ReadLimits,
  type SplitReadOptions,
  collect,
  pagedOrders,
  splitRead,
} from './paging.ts';
import { type Scrub, keyScrubber, scrubError } from './scrub.ts';
import { clientUserAgent } from './version.ts';

/**
 * The client's defaults, each changeable in the options (`errorBodyBytes` aside). The size bounds
 * are about ten times the largest order and page the OpenAPI document allows (every field at its
 * longest, strings written with the longest escapes: about 1.7 KB and 1.7 MB), room for fields the
 * document may add; test/client/contract.test.ts derives those from the document.
 */
export const clientDefaults = {
  /** `cancelOrder` and each v2 page request, retries included. */
  timeoutMs: 30_000,
  /**
   * The longest any call waits for the server to send anything: the answer's headers (the
   * connection included), the next part of a body. Six times the service's longest healthy pause
   * (a DynamoDB read, 5 s with its retries), above API Gateway's 29 s integration timeout, well
   * inside its 5-minute idle close of a stream.
   */
  idleTimeoutMs: 30_000,
  /** The largest v2 page body accepted, in bytes after decompression. */
  maxPageBytes: 16 * 1024 * 1024,
  /** The largest order of a v1 list accepted, in bytes after decompression. */
  maxOrderBytes: 16 * 1024,
  /** The most of an error answer's body read (an Error record is at most ~12 KB); not an option. */
  errorBodyBytes,
} as const;

export type StoreOrdersClientOptions = {
  /** The stage's base URL, ending in `/v1`: the stack's `BaseUrl` output (an OpenAPI server URL + `/v1`; `npm start`: http://127.0.0.1:3000/v1). */
  baseUrl: string;
  apiKey: string;
  /** A `fetch` of your own (default: the global one). It is given the whole request, the key included. */
  fetch?: typeof fetch | undefined;
  /** The default timeout of `cancelOrder` and of each v2 page request, in milliseconds (default 30,000). */
  timeoutMs?: number | undefined;
  /** The longest any call waits for the server to send anything, in milliseconds (default 30,000; Infinity: no bound). */
  idleTimeoutMs?: number | undefined;
  /** The largest v2 page body accepted, in bytes after decompression (default 16 MiB). */
  maxPageBytes?: number | undefined;
  /** The largest order of a v1 list accepted, in bytes after decompression (default 16 KiB). */
  maxOrderBytes?: number | undefined;
  /** The `User-Agent` of every request (default `store-orders-client/<version> node/<version>`, exported as `clientUserAgent`). */
  userAgent?: string | undefined;
  /** The default retries of every call. */
  retry?: RetryOptions | undefined;
  /** Called before each request, after each answer and before each retry; they never see the key. */
  hooks?: Hooks | undefined;
};

export type ListOptions = CallOptions;

const positive = (name: string, value: number | undefined, fallback: number, unit = 'milliseconds'): number => {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0))
    throw new TypeError(`${name} must be a number of ${unit} above 0 (Infinity: no bound), got ${value}`);
  return value;
};

/** What the client's calls throw: a `StoreOrdersError` scrubbed of the key, anything else (a hook's error, a TypeError) as it is. */
const scrubbed = (error: unknown, scrub: Scrub): unknown => (error instanceof StoreOrdersError ? scrubError(error, scrub) : error);

export class StoreOrdersClient {
  readonly #baseUrl: string;
  readonly #v2Url: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #idleTimeoutMs: number;
  readonly #maxPageBytes: number;
  readonly #maxOrderBytes: number;
  readonly #userAgent: string;
  readonly #retry: RetryOptions;
  readonly #hooks: Hooks;
  readonly #scrub: Scrub;

  constructor(options: StoreOrdersClientOptions) {
    const baseUrl = options.baseUrl.replace(/\/+$/, '');
    if (!/\/v1$/.test(baseUrl))
      throw new TypeError(`baseUrl must end in /v1 (the stage's BaseUrl: an OpenAPI server URL followed by /v1), got ${options.baseUrl}`);
    if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new TypeError('apiKey is required');
    this.#baseUrl = baseUrl;
    // The v2 list is on the same API and stage: the base URL with /v2 in place of /v1.
    this.#v2Url = `${baseUrl.slice(0, -'/v1'.length)}/v2/store/orders`;
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#timeoutMs = positive('timeoutMs', options.timeoutMs, clientDefaults.timeoutMs);
    this.#idleTimeoutMs = positive('idleTimeoutMs', options.idleTimeoutMs, clientDefaults.idleTimeoutMs);
    this.#maxPageBytes = positive('maxPageBytes', options.maxPageBytes, clientDefaults.maxPageBytes, 'bytes');
    this.#maxOrderBytes = positive('maxOrderBytes', options.maxOrderBytes, clientDefaults.maxOrderBytes, 'bytes');
    this.#userAgent = options.userAgent ?? clientUserAgent;
    this.#retry = options.retry ?? {};
    this.#hooks = options.hooks ?? {};
    this.#scrub = keyScrubber(options.apiKey);
  }

  /**
   * Every order of the store (v1), parsed as the response arrives: memory holds one chunk and one
   * order at a time, whatever the store's size. A list cut short throws `ResponseCutError` after
   * the orders that did arrive, one that sends nothing for `idleTimeoutMs` (default 30 s)
   * `ResponseStalledError`, an order past `maxOrderBytes` `ResponseTooLargeError`; nothing is
   * silently missing. Retries cover the request until the response starts; `timeoutMs` (default:
   * none) bounds the whole read; breaking out of the loop closes the connection. `onMeta` is told
   * once the whole list was read.
   */
  async *listOrders(options: ListOptions = {}): AsyncGenerator<Order, void, undefined> {
    const call = callSignal(options);
    try {
      const { body, meta, watch } = await exchange(
        this.#exchange('listOrders', 'GET', `${this.#baseUrl}/store/orders`, 200, call.signal, options),
        (response, m, w) => Promise.resolve({ body: response.body, meta: m, watch: w }),
      );
      try {
        if (body === null) throw invalidResponse('The list answered without a body', meta);
        const read = { body, meta, signal: call.signal, watch, int64Keys, maxOrderBytes: this.#maxOrderBytes };
        yield* readListBody(read) as AsyncGenerator<Order, void, undefined>;
      } finally {
        watch.dispose();
      }
      options.onMeta?.(meta);
    } catch (error) {
      throw scrubbed(error, this.#scrub);
    } finally {
      call.dispose();
    }
  }

  /**
   * The v2 list, one page per iteration (each page request buffered up to `maxPageBytes`, retried
   * and bounded by `timeoutMs` on its own). `page.cursor` resumes after that page: pass it back
   * with the same filters (`status`, `shipDateFrom`, `shipDateTo`, `part`, `parts`) to continue a
   * read that stopped. The last page has no cursor. A `nextCursor` this read was given before ends
   * it with `InvalidResponseError` (`client_cursor_repeated`): the read would loop; `maxPages`
   * (default: none) ends it with `PageLimitError` once that many pages were taken and more remain.
   * `onMeta` is told of each page.
   */
  async *listOrderPages(query: OrderPageQuery & CallOptions & ReadLimits = {}): AsyncGenerator<OrderPage, void, undefined> {
    const { signal, timeoutMs, idleTimeoutMs, retry, onMeta, maxPages, cursor: firstCursor, ...filters } = query;
    if (maxPages !== undefined && (!Number.isSafeInteger(maxPages) || maxPages < 1))
      throw new TypeError(`maxPages must be an integer of 1 or more, got ${maxPages}`);
    // Every cursor of this read: one given twice would send the read round the same pages forever.
    const seen = new Set<string>(firstCursor === undefined ? [] : [firstCursor]);
    let cursor = firstCursor;
    for (let pages = 1; ; pages++) {
      const { page, meta } = await this.#page(v2Search(filters, cursor), { signal, timeoutMs, idleTimeoutMs, retry, onMeta });
      if (page.cursor !== undefined && seen.has(page.cursor)) throw scrubbed(cursorRepeated(meta, pages), this.#scrub);
      yield page;
      if (page.cursor === undefined) return;
      if (maxPages !== undefined && pages >= maxPages) throw pageLimit(meta, maxPages, page.cursor);
      seen.add(page.cursor);
      cursor = page.cursor;
    }
  }

  /**
   * The v2 list order by order, its pages fetched as the loop reaches them (Stripe's
   * auto-pagination, Octokit's `paginate.iterator`). `onPage` is awaited after each page's orders
   * were all taken, with the cursor that resumes after it (null once the read is done): save it,
   * and pass it back as `cursor` to resume.
   */
  listOrdersPaged(query: OrderPageQuery & CallOptions & PagedOptions & ReadLimits = {}): AsyncGenerator<Order, void, undefined> {
    return pagedOrders((q) => this.listOrderPages(q), query);
  }

  /** At most `limit` orders of the v2 list, in one array (Stripe's `autoPagingToArray({ limit })`); stops asking once it has them. */
  collectOrders(query: OrderPageQuery & CallOptions & CollectOptions & ReadLimits): Promise<Order[]> {
    return collect((q) => this.listOrderPages(q), query);
  }

  /**
   * A split read: parts 1…`parts` of the v2 list, at most `concurrency` of them at a time, as one
   * stream of orders. `onPage` is awaited after each page of a part, with that part's cursor
   * (null once the part is done); `cursors` resumes each part from its own (null: done, skipped).
   * `maxPages` bounds each part.
   */
  readSplit(
    options: SplitReadOptions & Omit<OrderPageQuery, 'part' | 'parts' | 'cursor'> & CallOptions & ReadLimits,
  ): AsyncGenerator<Order, void, undefined> {
    return splitRead((q) => this.listOrderPages(q), options);
  }

  /**
   * Cancels a pending order (204); cancelling an already cancelled order succeeds again. Throws
   * `NotFoundError` (404 `order_not_found`), `ConflictError` (409 `order_already_shipped`,
   * `order_not_cancellable`), and the rest as every call. `timeoutMs` bounds the call, retries
   * included. `onMeta` is told of the 204.
   */
  async cancelOrder(id: bigint, options: CallOptions = {}): Promise<void> {
    // A number may already have lost digits (2^53 and above): only a bigint says which order.
    if (typeof id !== 'bigint') throw new TypeError(`cancelOrder takes the order id as a bigint, got ${typeof id}`);
    const call = callSignal({ signal: options.signal, timeoutMs: options.timeoutMs ?? this.#timeoutMs });
    try {
      const url = `${this.#baseUrl}/store/orders/${id}`;
      const meta = await exchange(this.#exchange('cancelOrder', 'DELETE', url, 204, call.signal, options), async (response, m, watch) => {
        watch.dispose();
        await response.body?.cancel();
        return m;
      });
      options.onMeta?.(meta);
    } finally {
      call.dispose();
    }
  }

  /** One v2 page, its body read within `maxPageBytes` and the idle bound. */
  async #page(search: string, options: CallOptions): Promise<{ page: OrderPage; meta: CallMeta }> {
    const call = callSignal({ signal: options.signal, timeoutMs: options.timeoutMs ?? this.#timeoutMs });
    try {
      const url = `${this.#v2Url}${search}`;
      const result = await exchange(
        this.#exchange('listOrderPages', 'GET', url, 200, call.signal, options),
        async (response, meta, watch) => {
          try {
            const details = { status: 200, requestId: meta.requestId, attempts: meta.attempts };
            const text = await readBody(response, { watch, maxBytes: this.#maxPageBytes, eachChunk: true, details, what: 'The page' });
            // A body cut while read is thrown from readBody as a connection failure: the page is asked for again.
            return { page: readPage(text, meta), meta };
          } finally {
            watch.dispose();
          }
        },
      );
      options.onMeta?.(result.meta);
      return result;
    } finally {
      call.dispose();
    }
  }

  #exchange(operation: Operation, method: string, url: string, expect: number, signal: AbortSignal, options: CallOptions) {
    return {
      fetch: this.#fetch,
      operation,
      method,
      url,
      headers: { Authorization: `Bearer ${this.#apiKey}`, Accept: 'application/json', 'User-Agent': this.#userAgent },
      hooks: this.#hooks,
      expect,
      signal,
      retry: { ...defaultRetry, ...this.#retry, ...options.retry },
      idleTimeoutMs: positive('idleTimeoutMs', options.idleTimeoutMs, this.#idleTimeoutMs),
      scrub: this.#scrub,
    };
  }
}

const cursorRepeated = (meta: CallMeta, page: number) =>
  new InvalidResponseError({
    code: 'client_cursor_repeated',
    status: 200,
    message: `Page ${page} of this read named as its next page a cursor the read was given before: the read would loop, so it ends`,
    requestId: meta.requestId,
    attempts: meta.attempts,
  });

const pageLimit = (meta: CallMeta, maxPages: number, cursor: string) =>
  new PageLimitError({
    code: 'client_page_limit',
    status: 200,
    message: `The read took ${maxPages} pages (maxPages) and the list goes on: its cursor resumes after them`,
    requestId: meta.requestId,
    attempts: meta.attempts,
    maxPages,
    cursor,
  });

/** A v2 page's text as an `OrderPage`: every int64 exact, every element an order (exported for the bench, not from the package). */
export const readPage = (text: string, meta: CallMeta): OrderPage => {
  let body: unknown;
  try {
    body = parseOrdersJson(text, int64Keys, (value) => (value as { orders?: unknown } | null)?.orders);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw invalidResponse(`The page is not JSON of orders: ${error.message}`, meta, error);
  }
  const { orders, nextCursor } = (body ?? {}) as { orders?: unknown; nextCursor?: unknown };
  if (!Array.isArray(orders) || (nextCursor !== undefined && typeof nextCursor !== 'string'))
    throw invalidResponse('The page is not {"orders": [...], "nextCursor"?: "..."}', meta);
  if (!orders.every(isOrderLike)) throw invalidResponse('The list holds an element that is not an order with an id', meta);
  return { orders: orders as Order[], cursor: nextCursor };
};

/** The v2 query string, parameters in a fixed order, undefined ones left out. */
const v2Search = (filters: Omit<OrderPageQuery, 'cursor'>, cursor: string | undefined): string => {
  const params = new URLSearchParams();
  const add = (name: string, value: string | number | Date | undefined) => {
    if (value !== undefined) params.set(name, value instanceof Date ? value.toISOString() : String(value));
  };
  add('status', filters.status);
  add('shipDateFrom', filters.shipDateFrom);
  add('shipDateTo', filters.shipDateTo);
  add('pageSize', filters.pageSize);
  add('part', filters.part);
  add('parts', filters.parts);
  add('cursor', cursor);
  const search = params.toString();
  return search === '' ? '' : `?${search}`;
};
