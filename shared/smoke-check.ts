/**
 * The black-box checks of a running stage: what `npm run smoke` (infra/ops/smoke.ts, which reads
 * its command line) runs from a shell, the Synthetics canary (functions/canary.ts) every minute,
 * and the pre-traffic hook (functions/pre-traffic-hook.ts) uses to judge a new version's answers.
 * The lists and the cancels go through the API's own client (client/src, bundled from source:
 * it has no dependency), as a store's developer would call them, with retries off so each check
 * sees the service's own answer. Read-only, unless `cancel` names an order it may cancel. One
 * line per check, a summary, and a timeout on every request.
 */
import { z } from 'zod';
import { type Order as ClientOrder, type OrderPage, StoreOrdersClient, StoreOrdersError } from '../client/src/index.ts';
import { integerPattern, orderSchema } from './schemas.ts';

/** What to check: the stage's base URL (…/v1), the key, and the limits of each request. */
export type SmokeOptions = {
  baseUrl: string;
  key: string;
  /** An order the check may cancel (it must be pending or cancelled): the only write. */
  cancel?: bigint;
  /** The most any one request may take, in milliseconds. */
  timeoutMs: number;
  /** Read about this many bytes of each v1 list (the chunk that reaches it included) and check the orders in them. */
  listBytes?: number;
  /**
   * Whether to ask for a filtered v2 page (`?status=pending`; default true). A stage whose status
   * index is not ACTIVE answers it 503 (docs/deploying.md#the-status-index): false there.
   */
  statusFilter?: boolean;
};

/** An id no store issues: int64's minimum. Cancelling it must answer 404 order_not_found. */
const idThatCannotExist = -9223372036854775808n;

/** An HTTP answer as a client sees it; the pre-traffic hook builds one from a function's own answer. */
export type Answer = { status: number; headers: Headers; body: string; firstByteMs: number; cut?: boolean };
type Check = { name: string; run: () => Promise<string> };

export const fail = (message: string): never => {
  throw new Error(message);
};

/**
 * The client's `fetch`, watched: the last answer's headers, the time to its first body byte and
 * the body bytes read (after any gzip is undone), with `Accept-Encoding` set as the check asks.
 * With `maxBytes`, the body ends after the chunk that reaches it (`stopped`) and the connection
 * is closed: the client then reports the list cut after its last complete order.
 */
const watchedFetch = (acceptEncoding?: 'identity' | 'gzip', maxBytes = Infinity) => {
  const seen = { headers: new Headers(), firstByteMs: 0, bytes: 0, stopped: false };
  const watched: typeof fetch = async (input, init) => {
    const started = performance.now();
    const headers = new Headers(init?.headers);
    if (acceptEncoding !== undefined) headers.set('Accept-Encoding', acceptEncoding);
    const response = await fetch(input, { ...init, headers });
    Object.assign(seen, { headers: response.headers, firstByteMs: performance.now() - started, bytes: 0, stopped: false });
    if (response.body === null) return response;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => {
        if (seen.bytes === 0) seen.firstByteMs = performance.now() - started;
        seen.bytes += chunk.byteLength;
        controller.enqueue(chunk);
        if (seen.bytes >= maxBytes) {
          seen.stopped = true;
          controller.terminate();
        }
      },
    });
    const { status, statusText } = response;
    return new Response(response.body.pipeThrough(counter), { status, statusText, headers: response.headers });
  };
  return { seen, fetch: watched };
};

/** A client for one check, with its watched fetch; retries off, so an outage is seen as it is. */
const clientFor = (options: SmokeOptions, watch: ReturnType<typeof watchedFetch>, key = options.key) =>
  new StoreOrdersClient({
    baseUrl: options.baseUrl,
    apiKey: key,
    fetch: watch.fetch,
    timeoutMs: options.timeoutMs,
    retry: { maxAttempts: 1 },
  });

/**
 * A check that honours the key's limits: a 429 is its tier at work (a standard key may list once
 * every two seconds), not a fault, so the check waits as told (up to 5 s) and runs again, at most
 * twice. Any other failure, or a longer wait, fails the check.
 */
const withinTier = async <T>(run: () => Promise<T>): Promise<T> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      const waitSeconds = error instanceof StoreOrdersError && error.status === 429 ? error.retryAfterSeconds : undefined;
      if (attempt === 3 || waitSeconds === undefined || waitSeconds > 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, waitSeconds * 1000 + 100));
    }
  }
};

/** The failure to report when a call that should have succeeded threw `error`. */
const unexpected = (expected: number, error: unknown): never => {
  // The client's own findings (a cut list, an answer that is not the documented JSON) say what they saw.
  if (error instanceof StoreOrdersError && error.code.startsWith('client_')) fail(error.message.slice(0, 300));
  if (error instanceof StoreOrdersError && error.status > 0)
    fail(`expected ${expected}, got ${error.status} ${error.code}: ${error.message.slice(0, 200)}`);
  throw error;
};

/** The request id of the last answer, or a failure. */
const requestIdSeen = (watch: ReturnType<typeof watchedFetch>) => watch.seen.headers.get('x-request-id') || fail('no X-Request-Id header');

/**
 * An order as the client read it (int64 fields as bigint, quantity a number) in the shape the
 * Order schema checks (integers as their exact text); any other type stays unreadable to it.
 */
const orderAsText = (order: ClientOrder): unknown => {
  const text = (value: unknown, type: 'bigint' | 'number') =>
    value === undefined ? undefined : typeof value === type ? String(value) : null;
  return { ...order, id: text(order.id, 'bigint'), petId: text(order.petId, 'bigint'), quantity: text(order.quantity, 'number') };
};

/** Every order is a valid Order (and has `status` when given), or a failure naming the first that is not. */
const checkOrders = (orders: ClientOrder[], status?: string) => {
  const invalid = orders.findIndex((order) => !orderSchema.safeParse(orderAsText(order)).success);
  if (invalid >= 0) fail(`order ${invalid} is not a valid Order: ${shown(orders[invalid])}`);
  const other = orders.find((order) => status !== undefined && order.status !== status);
  if (other !== undefined) fail(`asked for ${status} orders, got order ${other.id} with status ${String(other.status)}`);
};

/** An order as JSON, bigints marked with n, cut to 200 characters. */
const shown = (order: unknown) =>
  JSON.stringify(order, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value)).slice(0, 200);

/** The v1 list streams valid orders (read whole, or its first `listBytes`), through `listOrders()`. */
const checkList = async (options: SmokeOptions, encoding: 'identity' | 'gzip') => {
  const watch = watchedFetch(encoding, options.listBytes);
  const orders: ClientOrder[] = [];
  const read = async () => {
    orders.length = 0;
    try {
      for await (const order of clientFor(options, watch).listOrders({ timeoutMs: options.timeoutMs })) orders.push(order);
    } catch (error) {
      // Reading stopped on purpose: the client saw a list cut after the orders that did arrive.
      if (!(watch.seen.stopped && error instanceof StoreOrdersError && error.code === 'client_response_cut')) throw error;
    }
  };
  await withinTier(read).catch((error: unknown) => unexpected(200, error));
  if (encoding === 'gzip' && watch.seen.headers.get('content-encoding') !== 'gzip') fail('asked for gzip, got no Content-Encoding: gzip');
  checkOrders(orders);
  const { stopped, bytes, firstByteMs } = watch.seen;
  const what = stopped ? `the first ${orders.length} orders (reading stopped after ${bytes} bytes)` : `${orders.length} orders`;
  return `200, ${what}, first byte after ${Math.round(firstByteMs)} ms, X-Request-Id ${requestIdSeen(watch)}`;
};

/** The first page of the v2 list (of `status` orders, if given), through `listOrderPages()`. */
const firstPage = async (client: StoreOrdersClient, timeoutMs: number, status?: 'pending'): Promise<OrderPage> => {
  for await (const page of client.listOrderPages({ ...(status === undefined ? {} : { status }), timeoutMs })) return page;
  return fail('the v2 list gave no page');
};

/** The first v2 page (of `status` orders, if given) holds valid orders. */
const checkPage = async (options: SmokeOptions, status?: 'pending') => {
  const watch = watchedFetch();
  const client = clientFor(options, watch);
  const page = await withinTier(() => firstPage(client, options.timeoutMs, status)).catch((error: unknown) => unexpected(200, error));
  checkOrders(page.orders, status);
  const more = page.cursor === undefined ? 'the last page' : 'more pages after it';
  return `200, ${page.orders.length} orders, ${more}, X-Request-Id ${requestIdSeen(watch)}`;
};

/** The call (which resolves to its success status) fails with the Error record `code` and status `status`, or the check fails. */
const expectClientError = async (call: () => Promise<number>, status: number, code: string) => {
  let succeeded: number;
  try {
    succeeded = await call();
  } catch (error) {
    if (!(error instanceof StoreOrdersError) || error.status === 0) throw error;
    if (error.status !== status || error.code !== code)
      fail(`expected ${status} ${code}, got ${error.status} ${error.code}: ${error.message.slice(0, 200)}`);
    return `${status} ${code}, X-Request-Id ${error.requestId ?? fail('no X-Request-Id header')}`;
  }
  return fail(`expected ${status} ${code}, got ${succeeded}`);
};

/** A request the client has no call for (an unknown route), answered as it is. */
const rawAnswer = async (options: SmokeOptions, path: string): Promise<Answer> => {
  const started = performance.now();
  const headers = { Authorization: `Bearer ${options.key}` };
  const response = await fetch(`${options.baseUrl}${path}`, { headers, signal: AbortSignal.timeout(options.timeoutMs) });
  const body = await response.text();
  return { status: response.status, headers: response.headers, body, firstByteMs: performance.now() - started };
};

/** The first order of the v1 list, read with `key` (so that a wrong key meets the list's authorizer). */
const firstListed = async (client: StoreOrdersClient, timeoutMs: number) => {
  for await (const _order of client.listOrders({ timeoutMs })) break;
  return 200;
};

const checks = (options: SmokeOptions): Check[] => {
  const wrongKey = watchedFetch();
  const cancels = watchedFetch();
  const cancel = (id: bigint) =>
    withinTier(async () => (await clientFor(options, cancels).cancelOrder(id, { timeoutMs: options.timeoutMs }), 204));
  return [
    { name: 'list', run: () => checkList(options, 'identity') },
    { name: 'list with gzip', run: () => checkList(options, 'gzip') },
    { name: 'v2 page', run: () => checkPage(options) },
    ...(options.statusFilter === false ? [] : [{ name: 'v2 page of pending orders', run: () => checkPage(options, 'pending') }]),
    {
      name: 'wrong key',
      run: async () => {
        const client = clientFor(options, wrongKey, 'smoke-test-key-that-is-not-valid');
        const line = await expectClientError(() => firstListed(client, options.timeoutMs), 401, 'unauthorized');
        if (wrongKey.seen.headers.get('www-authenticate') !== 'Bearer') fail('401 without WWW-Authenticate: Bearer');
        return line;
      },
    },
    {
      name: 'unknown route',
      run: async () => expectError(await rawAnswer(options, '/smoke/no-such-route'), 404, 'route_not_found'),
    },
    {
      name: 'cancel an id that cannot exist',
      run: () => expectClientError(() => cancel(idThatCannotExist), 404, 'order_not_found'),
    },
    ...(options.cancel === undefined
      ? []
      : [
          {
            name: `cancel order ${options.cancel}`,
            run: async () => {
              await cancel(options.cancel!).catch((error: unknown) => unexpected(204, error));
              return `204, X-Request-Id ${requestIdSeen(cancels)}`;
            },
          },
        ]),
  ];
};

/** Why a check failed, in one line. */
const reasonOf = (error: unknown, options: SmokeOptions) =>
  error instanceof Error ? (error.name === 'TimeoutError' ? `no answer within ${options.timeoutMs} ms` : error.message) : String(error);

/** Runs every check and prints one line each and a summary; resolves to the number of checks that failed. */
export const smoke = async (options: SmokeOptions, out: (line: string) => void = console.log): Promise<number> => {
  out(`Smoke test of ${options.baseUrl} (${options.cancel === undefined ? 'read-only' : `may cancel order ${options.cancel}`})`);
  let failed = 0;
  const all = checks(options);
  for (const { name, run } of all) {
    try {
      out(`PASS  ${name}: ${await run()}`);
    } catch (error) {
      failed += 1;
      out(`FAIL  ${name}: ${reasonOf(error, options)}`);
    }
  }
  out(failed === 0 ? `All ${all.length} checks passed.` : `${failed} of ${all.length} checks FAILED.`);
  return failed;
};

/** The answer's X-Request-Id (every answer carries one), or a failure. */
const requestIdOf = (answer: Answer) => answer.headers.get('x-request-id') || fail('no X-Request-Id header');

/** Whether JSON.parse hands a reviver each value's source text (Node.js 22 and later; not 20). */
const sourceTextAccess = JSON.parse('1', (_key, value: unknown, context?: { source?: string }) => context?.source === '1' || value);

/** JSON with every integer kept as its exact text, so int64 ids are checked digit for digit. */
const parseExact = (text: string): unknown =>
  JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined && integerPattern.test(context.source) ? context.source : value,
  );

const errorRecord = z.strictObject({ code: z.string(), message: z.string(), status: z.number() });

/** The answer is the Error record `code` with status `status`, or a failure. */
export const expectError = (answer: Answer, status: number, code: string) => {
  if (answer.status !== status) fail(`expected ${status} ${code}, got ${answer.status}: ${answer.body.slice(0, 200)}`);
  let record: unknown;
  try {
    record = JSON.parse(answer.body);
  } catch {
    fail(`expected an Error record, got ${answer.body.slice(0, 200)}`);
  }
  const parsed = errorRecord.safeParse(record);
  if (!parsed.success || parsed.data.code !== code || parsed.data.status !== status)
    fail(`expected the Error record {code: ${code}, status: ${status}}, got ${answer.body.slice(0, 200)}`);
  return `${status} ${code}, X-Request-Id ${requestIdOf(answer)}`;
};

/**
 * The start of a list cut short, closed after its last complete order: `[{…},{…},{…` → `[{…},{…}]`.
 * Orders are flat objects, so an order ends where a `}` outside a string brings the depth back to 1.
 */
export const completeOrdersOf = (prefix: string): string => {
  if (!prefix.startsWith('[')) fail(`expected a JSON array, got ${prefix.slice(0, 200)}`);
  let depth = 0;
  let inString = false;
  let end = 1;
  for (let i = 0; i < prefix.length; i++) {
    const char = prefix[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '[' || char === '{') depth++;
    else if (char === ']' || char === '}') {
      depth--;
      if (depth === 1) end = i + 1;
    }
  }
  return `${prefix.slice(0, end)}]`;
};

/** The orders of a list answer: status 200 and a JSON array of valid Orders (ids kept exact), or a failure. */
export const listedOrders = (answer: Answer): unknown[] => {
  if (answer.status !== 200) fail(`expected 200, got ${answer.status}: ${answer.body.slice(0, 200)}`);
  // Without it ids above 2^53 would be rounded and every such order reported invalid: say why instead.
  if (sourceTextAccess !== true)
    fail(`Node.js ${process.versions.node} cannot read JSON integers exactly (JSON.parse source text access needs Node.js 22 or later)`);
  let orders: unknown;
  try {
    orders = parseExact(answer.body);
  } catch {
    fail(`expected a JSON array, got ${answer.body.slice(0, 200)}`);
  }
  if (!Array.isArray(orders)) fail(`expected a JSON array, got ${answer.body.slice(0, 200)}`);
  const list = orders as unknown[];
  const invalid = list.findIndex((entry) => !orderSchema.safeParse(entry).success);
  if (invalid >= 0) fail(`order ${invalid} is not a valid Order: ${JSON.stringify(list[invalid]).slice(0, 200)}`);
  return list;
};
