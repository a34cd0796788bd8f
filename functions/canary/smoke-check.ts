/**
 * The black-box checks of a running stage: what `npm run smoke` (infra/ops/smoke.ts, which reads
 * its command line) runs from a shell and the Synthetics canary (functions/canary/handler.ts) every minute.
 * The lists and the cancels go through the API's own client (client/src, bundled from source:
 * it has no dependency), as a store's developer would call them, with retries off so each check
 * sees the service's own answer. Read-only, unless `cancel` names an order it may cancel or
 * `probeOrders` lets the check cancel a pending order of its own. One line per check (PASS, FAIL,
 * or BUSY: the service refused with a documented refusal until the check's time ran out), a
 * summary, and a timeout on every request.
 */
import { type Order as ClientOrder, StoreOrdersClient, StoreOrdersError } from '../../client/src/index.ts';
import { type Answer, expectError, fail, ServiceBusy } from '../../shared/answers.ts';
import { checkProbeCancel, createProbeOrder, deleteProbeOrder, type ProbeOrders } from '../../shared/probe-writes.ts';
import { idThatCannotExist } from '../../shared/probes.ts';
import { orderSchema } from '../../shared/schemas.ts';

/** What to check: the stage's base URL (…/v1), the key, and the limits of each request. */
export type SmokeOptions = {
  baseUrl: string;
  key: string;
  /** An order the check may cancel (it must be pending or cancelled). */
  cancel?: bigint;
  /** The most any one request may take, in milliseconds. */
  timeoutMs: number;
  /**
   * Read about this many bytes of each v1 list (the chunk that reaches it included), then stop
   * reading: a client leaving the list (`--list-bytes`; the synthetic client's guard against a
   * version that does not bound a probe's list, shared/probes.ts probeListReadCapBytes).
   */
  listBytes?: number;
  /**
   * Whether to ask for a filtered v2 page (`?status=pending`; default true). A stage whose status
   * index is not ACTIVE answers it 503 (docs/reference/stages.md#the-status-index): false there.
   */
  statusFilter?: boolean;
  /** `Date.now()` by which the run must end: no busy wait and no check goes past it (default: none). */
  deadline?: number;
  /** The prober's own orders (the synthetic client): one is created pending, cancelled through the API, and deleted. */
  probeOrders?: ProbeOrders;
};

/** What a run found: checks that failed, and checks that found the service busy. */
export type SmokeOutcome = { readonly failed: number; readonly busy: number };

/**
 * One check: its name, its run, the requests one try of it sends with the prober's key, and
 * whether busy answers make it try again (up to `mostBusyTries`).
 */
type Check = { name: string; run: () => Promise<string>; keyed: number; retried: boolean };

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

/** A single `Retry-After` longer than this is not waited for: the check is busy at once. */
export const longestBusyWaitMs = 10_000;
/** Busy answers one check waits out at most, whatever its time. */
export const mostBusyTries = 5;

/**
 * A 429 that is the key's daily quota spent: one without `Retry-After` (the gateway's answers to a
 * rate, a burst or full list slots all say `Retry-After: 1`; a quota's header is mapped from the
 * authorizer's context, which AWS does not document: docs/api.md) or with one longer than the
 * longest busy wait (the quota's, counting to 00:00 UTC). Not load: a prober's tier is sized for
 * its worst day (test/unit/canary-quota.test.ts), so it fails the check, and a quota that runs out
 * is seen the day it does instead of blinding the synthetic client until midnight.
 */
const spentQuota = (error: unknown) =>
  error instanceof StoreOrdersError &&
  error.status === 429 &&
  (error.retryAfterSeconds === undefined || error.retryAfterSeconds * 1000 > longestBusyWaitMs);

/** The documented refusal `error` is (429 over a rate or a burst, or 503 with Retry-After), or undefined. */
const refusal = (error: unknown) =>
  error instanceof StoreOrdersError && (error.status === 429 || (error.status === 503 && error.retryAfterSeconds !== undefined))
    ? error
    : undefined;

/**
 * A check that honours the service's documented refusals: a 429 (a key's tier at work, a burst) or a
 * 503 with `Retry-After` (full list slots, a status index still backfilling) is the service busy, not
 * wrong. The check waits as told and runs again while its run's time allows; then it is BUSY.
 */
const whileBusy = async <T>(options: SmokeOptions, run: () => Promise<T>): Promise<T> => {
  for (let tries = 1; ; tries++) {
    try {
      return await run();
    } catch (error) {
      if (spentQuota(error))
        fail(
          `429, Retry-After ${(error as StoreOrdersError).retryAfterSeconds ?? 'none'}: the key's daily quota is spent, a configuration error of its tier, not load`,
        );
      const busy = refusal(error);
      if (busy === undefined) throw error;
      const waitMs = (busy.retryAfterSeconds ?? 1) * 1000 + 100;
      const said = `${busy.status} ${busy.code}, Retry-After ${busy.retryAfterSeconds ?? 'none'}`;
      if (tries === mostBusyTries || waitMs > longestBusyWaitMs || Date.now() + waitMs + options.timeoutMs > (options.deadline ?? Infinity))
        throw new ServiceBusy(`${said} (${tries} ${tries === 1 ? 'try' : 'tries'}), past this run's time`);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
};

/** The failure to report when a call that should have succeeded threw `error`. */
const unexpected = (expected: number, error: unknown): never => {
  // The client's own findings (a cut list, an answer that is not the documented JSON) say what they saw; a timeout is said by reasonOf.
  if (error instanceof StoreOrdersError && error.code.startsWith('client_') && error.code !== 'client_timeout')
    fail(error.message.slice(0, 300));
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

/** An order as JSON, bigints marked with n, cut to 200 characters. */
const shown = (order: unknown) =>
  JSON.stringify(order, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value)).slice(0, 200);

/** Every order is a valid Order (and has `status` when given), or a failure naming the first that is not. */
const checkOrders = (orders: ClientOrder[], status?: string) => {
  const invalid = orders.findIndex((order) => !orderSchema.safeParse(orderAsText(order)).success);
  if (invalid >= 0) fail(`order ${invalid} is not a valid Order: ${shown(orders[invalid])}`);
  const other = orders.find((order) => status !== undefined && order.status !== status);
  if (other !== undefined) fail(`asked for ${status} orders, got order ${other.id} with status ${String(other.status)}`);
};

/** `call`, busy answers waited out; any other failure is reported against the expected status. */
const expecting = <T>(options: SmokeOptions, expected: number, call: () => Promise<T>): Promise<T> =>
  whileBusy(options, call).catch((error: unknown) => (error instanceof ServiceBusy ? Promise.reject(error) : unexpected(expected, error)));

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
  await expecting(options, 200, read);
  if (encoding === 'gzip' && watch.seen.headers.get('content-encoding') !== 'gzip') fail('asked for gzip, got no Content-Encoding: gzip');
  checkOrders(orders);
  const { stopped, bytes, firstByteMs } = watch.seen;
  const what = stopped ? `the first ${orders.length} orders (reading stopped after ${bytes} bytes)` : `${orders.length} orders`;
  return `200, ${what}, first byte after ${Math.round(firstByteMs)} ms, X-Request-Id ${requestIdSeen(watch)}`;
};

/**
 * The v2 list's first page of one order and, through its cursor, the next: 200 both, valid orders.
 * `expectNext`: the store holds at least one item (the prober's own order), so a page of one must
 * carry a cursor, and a release that answers it 400 invalid_cursor fails here.
 */
const checkPages = async (options: SmokeOptions, expectNext: boolean) => {
  const watch = watchedFetch();
  const read = async () => {
    const pages = [];
    for await (const page of clientFor(options, watch).listOrderPages({ pageSize: 1, timeoutMs: options.timeoutMs })) {
      pages.push(page);
      if (pages.length === 2) break;
    }
    return pages;
  };
  const pages = await expecting(options, 200, read);
  for (const page of pages) checkOrders(page.orders);
  if (pages.length === 1 && expectNext) fail('a page of one order from a store holding the probe order came without a cursor');
  if (pages.length === 1) return `200, ${pages[0]!.orders.length} orders, the last page, X-Request-Id ${requestIdSeen(watch)}`;
  return `200 and 200 through the cursor, ${pages[0]!.orders.length} and ${pages[1]!.orders.length} orders, X-Request-Id ${requestIdSeen(watch)}`;
};

/** The first v2 page of pending orders holds only valid pending orders. */
const checkPendingPage = async (options: SmokeOptions) => {
  const watch = watchedFetch();
  const first = async () => {
    for await (const page of clientFor(options, watch).listOrderPages({ status: 'pending', timeoutMs: options.timeoutMs })) return page;
    return fail('the v2 list gave no page');
  };
  const page = await expecting(options, 200, first);
  checkOrders(page.orders, 'pending');
  const more = page.cursor === undefined ? 'the last page' : 'more pages after it';
  return `200, ${page.orders.length} orders, ${more}, X-Request-Id ${requestIdSeen(watch)}`;
};

/** The call (which resolves to its success status) fails with the Error record `code` and status `status`, or the check fails. */
const expectClientError = async (options: SmokeOptions, call: () => Promise<number>, status: number, code: string) => {
  let succeeded: number;
  try {
    succeeded = await whileBusy(options, call);
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

/** The checks, in order; `probeOrder` is the prober's own pending order (or why it could not be made), when it has one. */
const checks = (options: SmokeOptions, probeOrder: string | Error | undefined): Check[] => {
  const wrongKey = watchedFetch();
  const cancels = watchedFetch();
  const cancel = async (id: bigint) => {
    await expecting(options, 204, () => clientFor(options, cancels).cancelOrder(id, { timeoutMs: options.timeoutMs }));
    return requestIdSeen(cancels);
  };
  const wrongKeyCheck = async () => {
    const client = clientFor(options, wrongKey, 'smoke-test-key-that-is-not-valid');
    const line = await expectClientError(options, () => firstListed(client, options.timeoutMs), 401, 'unauthorized');
    if (wrongKey.seen.headers.get('www-authenticate') !== 'Bearer') fail('401 without WWW-Authenticate: Bearer');
    return line;
  };
  const absent = async () => {
    const call = async () => (
      await clientFor(options, cancels).cancelOrder(BigInt(idThatCannotExist), { timeoutMs: options.timeoutMs }),
      204
    );
    return expectClientError(options, call, 404, 'order_not_found');
  };
  const own = async (orders: ProbeOrders) => {
    if (probeOrder instanceof Error) return fail(`no probe order to cancel: ${probeOrder.message}`);
    return checkProbeCancel(orders, probeOrder!, (id) => cancel(BigInt(id)));
  };
  const named = options.cancel;
  return [
    { name: 'list', run: () => checkList(options, 'identity'), keyed: 1, retried: true },
    { name: 'list with gzip', run: () => checkList(options, 'gzip'), keyed: 1, retried: true },
    { name: 'v2 first and second page', run: () => checkPages(options, typeof probeOrder === 'string'), keyed: 2, retried: true },
    ...(options.statusFilter === false
      ? []
      : [{ name: 'v2 page of pending orders', run: () => checkPendingPage(options), keyed: 1, retried: true }]),
    { name: 'wrong key', run: wrongKeyCheck, keyed: 0, retried: true },
    {
      name: 'unknown route',
      run: async () => expectError(await rawAnswer(options, '/smoke/no-such-route'), 404, 'route_not_found'),
      keyed: 1,
      retried: false,
    },
    { name: 'cancel an id that cannot exist', run: absent, keyed: 1, retried: true },
    ...(options.probeOrders === undefined
      ? []
      : [{ name: 'cancel of a pending order', run: () => own(options.probeOrders!), keyed: 2, retried: true }]),
    ...(named === undefined
      ? []
      : [{ name: `cancel order ${named}`, run: async () => `204, X-Request-Id ${await cancel(named)}`, keyed: 1, retried: true }]),
  ];
};

/**
 * The requests one run sends with the prober's key: when every answer is right, and at most, when
 * every check is refused as busy until its last try. The synthetic client's tier must hold the
 * latter for every run of a day (test/unit/canary-quota.test.ts); `test/http/canary-quota.test.ts`
 * counts the former on the wire.
 */
export const keyedRequestsPerRun = (
  options: Pick<SmokeOptions, 'statusFilter' | 'probeOrders' | 'cancel'>,
): { readonly right: number; readonly worstCase: number } => {
  const all = checks({ baseUrl: '', key: '', timeoutMs: 0, ...options }, undefined);
  return {
    right: all.reduce((sum, { keyed }) => sum + keyed, 0),
    worstCase: all.reduce((sum, { keyed, retried }) => sum + keyed * (retried ? mostBusyTries : 1), 0),
  };
};

/** Why a check failed, in one line. */
const reasonOf = (error: unknown, options: SmokeOptions) =>
  error instanceof Error ? (error.name === 'TimeoutError' ? `no answer within ${options.timeoutMs} ms` : error.message) : String(error);

/** The summary line of a run. */
const summary = (checked: number, { failed, busy }: SmokeOutcome) =>
  failed > 0
    ? `${failed} of ${checked} checks FAILED${busy > 0 ? `, ${busy} busy` : ''}.`
    : busy > 0
      ? `${checked - busy} of ${checked} checks passed, ${busy} busy (the service refused with Retry-After until the run's time ran out).`
      : `All ${checked} checks passed.`;

/** Runs every check and prints one line each and a summary; resolves to how many failed and how many were busy. */
export const smoke = async (options: SmokeOptions, out: (line: string) => void = console.log): Promise<SmokeOutcome> => {
  const writes =
    options.cancel !== undefined ? `may cancel order ${options.cancel}` : options.probeOrders ? 'cancels an order of its own' : 'read-only';
  out(`Smoke test of ${options.baseUrl} (${writes})`);
  // Made first: while it exists the store holds at least one item, so a v2 page of one has a next page.
  const probeOrder = options.probeOrders && (await createProbeOrder(options.probeOrders).catch((error: unknown) => error as Error));
  let failed = 0;
  let busy = 0;
  const all = checks(options, probeOrder);
  try {
    for (const { name, run } of all) {
      try {
        if (Date.now() >= (options.deadline ?? Infinity))
          throw busy > 0
            ? new ServiceBusy("not started: the run's time went to a busy service")
            : new Error("not started: the run's time ran out");
        out(`PASS  ${name}: ${await run()}`);
      } catch (error) {
        if (error instanceof ServiceBusy) busy += 1;
        else failed += 1;
        out(`${error instanceof ServiceBusy ? 'BUSY' : 'FAIL'}  ${name}: ${reasonOf(error, options)}`);
      }
    }
  } finally {
    if (typeof probeOrder === 'string')
      await deleteProbeOrder(options.probeOrders!, probeOrder).catch((error: unknown) =>
        out(`probe order ${probeOrder} not deleted (its slot is free again once it expires): ${reasonOf(error, options)}`),
      );
  }
  out(summary(all.length, { failed, busy }));
  return { failed, busy };
};
