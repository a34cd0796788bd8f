/**
 * `StoreOrdersClient`: the v1 list streamed, the v2 list in pages, and the cancel, with exact
 * int64 ids, Error records as `StoreOrdersError`s and retries that respect `Retry-After`.
 */
import { InvalidResponseError, ResponseCutError, type StoreOrdersError } from './errors.ts';
import type { components } from './generated/openapi.ts';
import { type CallOptions, type RetryOptions, callSignal, defaultRetry, exchange } from './http.ts';
import { JsonArrayStream, JsonSyntaxError, parseJsonExact } from './json.ts';

/**
 * An order, as the OpenAPI document describes it (client/src/generated/openapi.ts, from
 * docs/openapi.json), with int64 fields as `bigint`. The document leaves every field optional;
 * this service always sends `id`, and the client refuses an order without one.
 */
export type Order = components['schemas']['Order'] & { id: bigint };

/** The int64 fields of an Order: parsed as `bigint`. */
type Int64Field = { [K in keyof Order]-?: NonNullable<Order[K]> extends bigint ? K : never }[keyof Order];
export const int64Fields = ['id', 'petId'] as const satisfies readonly Int64Field[];
// Fails to compile when the document gains an int64 field this list lacks (after `npm run openapi`).
const everyInt64Field: Exclude<Int64Field, (typeof int64Fields)[number]> extends never ? true : false = true;
const int64Keys: ReadonlySet<string> = new Set(everyInt64Field ? int64Fields : []);

/** Order statuses the v2 list filters on. */
export type OrderStatus = 'pending' | 'shipped' | 'cancelled';

/** The v2 list's query (docs/api.md): every field optional. */
export type OrderPageQuery = {
  status?: OrderStatus;
  /** Orders with `shipDate >= shipDateFrom` (an RFC 3339 date-time, or a Date). */
  shipDateFrom?: string | Date;
  /** Orders with `shipDate < shipDateTo`. */
  shipDateTo?: string | Date;
  /** Orders per page, 1..1000 (the service's default: 100). A page may hold fewer. */
  pageSize?: number;
  /** Resume after the page whose `cursor` this is; send the same filters and part with it. */
  cursor?: string;
  /** A split read: part `part` (1-based) of `parts` (1..16); both or neither. */
  part?: number;
  parts?: number;
};

/** One page of the v2 list. */
export type OrderPage = {
  orders: Order[];
  /** Where the next page starts: pass it as `cursor` to resume after this page. Absent on the last page. */
  cursor: string | undefined;
};

export type StoreOrdersClientOptions = {
  /** The stage's base URL, ending in `/v1` (the stack's `BaseUrl` output; `npm start`: http://127.0.0.1:3000/v1). */
  baseUrl: string;
  apiKey: string;
  /** A `fetch` of your own (default: the global one). */
  fetch?: typeof fetch;
  /** The default timeout of `cancelOrder` and of each v2 page request, in milliseconds (default 30,000). */
  timeoutMs?: number;
  /** The default retries of every call. */
  retry?: RetryOptions;
};

const defaultTimeoutMs = 30_000;

/** Each element of a list must be an order with an int64 id (the parser made it a bigint). */
const asOrder = (value: unknown, requestId: string | undefined): Order => {
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { id?: unknown }).id === 'bigint')
    return value as Order;
  throw new InvalidResponseError({
    code: 'client_invalid_response',
    status: 200,
    message: 'The list holds an element that is not an order with an id',
    requestId,
  });
};

export class StoreOrdersClient {
  readonly #baseUrl: string;
  readonly #v2Url: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #retry: RetryOptions;

  constructor(options: StoreOrdersClientOptions) {
    const baseUrl = options.baseUrl.replace(/\/+$/, '');
    if (!/\/v1$/.test(baseUrl)) throw new TypeError(`baseUrl must end in /v1 (the stage's BaseUrl), got ${options.baseUrl}`);
    if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new TypeError('apiKey is required');
    this.#baseUrl = baseUrl;
    // The v2 list is on the same API and stage: the base URL with /v2 in place of /v1.
    this.#v2Url = `${baseUrl.slice(0, -'/v1'.length)}/v2/store/orders`;
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    this.#retry = options.retry ?? {};
  }

  /**
   * Every order of the store (v1), parsed as the response arrives: memory holds one order at a
   * time, whatever the store's size. A list cut short throws `ResponseCutError` after the orders
   * that did arrive; nothing is silently missing. Retries cover the request until the response
   * starts; `timeoutMs` (default: none) bounds the whole read, and breaking out of the loop closes
   * the connection.
   */
  async *listOrders(options: CallOptions = {}): AsyncGenerator<Order, void, undefined> {
    const call = callSignal(options);
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    try {
      const { response, attempts } = await exchange(
        this.#exchange('GET', `${this.#baseUrl}/store/orders`, 200, call.signal, options),
        (r, n) => Promise.resolve({ response: r, attempts: n }),
      );
      const requestId = response.headers.get('x-request-id') ?? undefined;
      if (response.body === null) throw this.#invalid('The list answered without a body', requestId, attempts);
      reader = response.body.getReader();
      const decoder = new TextDecoder('utf-8', { fatal: true });
      const array = new JsonArrayStream(int64Keys);
      let ordersRead = 0;
      const cut = (cause: unknown) =>
        new ResponseCutError({
          code: 'client_response_cut',
          status: 200,
          message: `The list was cut after ${ordersRead} orders, before its end: read it again`,
          requestId,
          attempts,
          ordersRead,
          cause,
        });
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (call.signal.aborted) throw call.signal.reason;
          throw cut(error);
        }
        let elements: unknown[];
        try {
          if (chunk.done) {
            array.push(decoder.decode());
            array.end();
            return;
          }
          elements = array.push(decoder.decode(chunk.value, { stream: true }));
        } catch (error) {
          // Text that stops before the closing "]" is a cut; anything else is not the list's JSON.
          if (chunk.done && !array.done) throw cut(error);
          throw this.#invalid(`The list is not a JSON array of orders: ${(error as Error).message}`, requestId, attempts, error);
        }
        for (const element of elements) {
          yield asOrder(element, requestId);
          ordersRead++;
        }
      }
    } finally {
      call.dispose();
      // An early break or a failure: close the response rather than leave it open.
      await reader?.cancel().catch(() => undefined);
    }
  }

  /**
   * The v2 list, one page per iteration (each page request buffered, retried and bounded by
   * `timeoutMs` on its own). `page.cursor` resumes after that page: pass it back with the same
   * filters (`status`, `shipDateFrom`, `shipDateTo`, `part`, `parts`) to continue a read that
   * stopped. The last page has no cursor.
   */
  async *listOrderPages(query: OrderPageQuery & CallOptions = {}): AsyncGenerator<OrderPage, void, undefined> {
    const { signal, timeoutMs, retry, cursor: firstCursor, ...filters } = query;
    let cursor = firstCursor;
    do {
      const page = await this.#page(v2Search(filters, cursor), { signal, timeoutMs, retry });
      yield page;
      cursor = page.cursor;
    } while (cursor !== undefined);
  }

  /**
   * Cancels a pending order (204); cancelling an already cancelled order succeeds again. Throws
   * `NotFoundError` (404 `order_not_found`), `ConflictError` (409 `order_already_shipped`,
   * `order_not_cancellable`), and the rest as every call. `timeoutMs` bounds the call, retries included.
   */
  async cancelOrder(id: bigint, options: CallOptions = {}): Promise<void> {
    // A number may already have lost digits (2^53 and above): only a bigint says which order.
    if (typeof id !== 'bigint') throw new TypeError(`cancelOrder takes the order id as a bigint, got ${typeof id}`);
    const call = callSignal({ signal: options.signal, timeoutMs: options.timeoutMs ?? this.#timeoutMs });
    try {
      await exchange(this.#exchange('DELETE', `${this.#baseUrl}/store/orders/${id}`, 204, call.signal, options), async (response) => {
        await response.body?.cancel();
      });
    } finally {
      call.dispose();
    }
  }

  async #page(search: string, options: CallOptions): Promise<OrderPage> {
    const call = callSignal({ signal: options.signal, timeoutMs: options.timeoutMs ?? this.#timeoutMs });
    try {
      return await exchange(this.#exchange('GET', `${this.#v2Url}${search}`, 200, call.signal, options), async (response, attempts) => {
        // A body cut while read is thrown from here as a connection failure: the page is asked for again.
        const text = await response.text();
        return this.#readPage(text, response.headers.get('x-request-id') ?? undefined, attempts);
      });
    } finally {
      call.dispose();
    }
  }

  #readPage(text: string, requestId: string | undefined, attempts: number): OrderPage {
    let body: unknown;
    try {
      body = parseJsonExact(text, int64Keys);
    } catch (error) {
      if (!(error instanceof JsonSyntaxError)) throw error;
      throw this.#invalid(`The page is not JSON: ${error.message}`, requestId, attempts, error);
    }
    const { orders, nextCursor } = (body ?? {}) as { orders?: unknown; nextCursor?: unknown };
    if (!Array.isArray(orders) || (nextCursor !== undefined && typeof nextCursor !== 'string'))
      throw this.#invalid('The page is not {"orders": [...], "nextCursor"?: "..."}', requestId, attempts);
    return { orders: orders.map((order) => asOrder(order, requestId)), cursor: nextCursor };
  }

  #exchange(method: string, url: string, expect: number, signal: AbortSignal, options: CallOptions) {
    return {
      fetch: this.#fetch,
      url,
      init: { method, headers: { Authorization: `Bearer ${this.#apiKey}`, Accept: 'application/json' } },
      expect,
      signal,
      retry: { ...defaultRetry, ...this.#retry, ...options.retry },
    };
  }

  #invalid(message: string, requestId: string | undefined, attempts: number, cause?: unknown): StoreOrdersError {
    return new InvalidResponseError({ code: 'client_invalid_response', status: 200, message, requestId, attempts, cause });
  }
}

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
