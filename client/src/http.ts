/**
 * One request to the service with the client's retries: 429 and 503 (and 504) are sent again
 * after `Retry-After` plus jitter, a failed connection after a backoff, within a number of
 * attempts and a deadline; a redirect is refused, never followed; anything else that is not the
 * expected status becomes the `StoreOrdersError` of its Error record. Each attempt is watched
 * (bounds.ts): nothing from the server for `idleTimeoutMs`, from the request on, ends it. A
 * timeout or an abort is a `TimeoutError` or `AbortError`, the last answer its cause; every error
 * is scrubbed of the key (scrub.ts). Only `fetch`, `AbortSignal` and timers: Node 20+ and browsers.
 */
import { Watchdog, noBoundPast } from './bounds.ts';
import { AbortError, ConnectionError, RedirectError, StoreOrdersError, TimeoutError } from './errors.ts';
import { failureOf, isRedirect } from './failures.ts';
import { type CallMeta, type Hooks, type Operation, type RequestEvent, redactHeaders } from './hooks.ts';
import { type Scrub, scrubError } from './scrub.ts';

export type RetryOptions = {
  /** Requests sent at most, the first included (default 4; 1 turns retries off). */
  maxAttempts?: number | undefined;
  /** No retry waits past this many milliseconds after the call started (default 60,000). */
  deadlineMs?: number | undefined;
  /** Statuses sent again (default 429, 503, 504: each answers with `Retry-After`). */
  retryStatuses?: readonly number[] | undefined;
  /** The wait before the second attempt when the answer gave no `Retry-After`, doubled each time (default 200). */
  backoffMs?: number | undefined;
  /** The longest backoff without `Retry-After` (default 5,000). */
  maxBackoffMs?: number | undefined;
  /** Up to this fraction of the wait is added at random, so clients told the same `Retry-After` do not return together (default 0.25). */
  jitter?: number | undefined;
};

export type CallOptions = {
  /** Aborts the call; it then rejects with an `AbortError` holding the signal's reason (a `TimeoutError` for `AbortSignal.timeout`). */
  signal?: AbortSignal | undefined;
  /** Aborts the call after this many milliseconds (a `TimeoutError`); see each operation for what it covers. */
  timeoutMs?: number | undefined;
  /** The longest the call waits for the server to send anything (the answer's headers, the next part of a body), in milliseconds. */
  idleTimeoutMs?: number | undefined;
  retry?: RetryOptions | undefined;
  /** Told the request id, attempts and status of each successful answer (see each operation for when). */
  onMeta?: ((meta: CallMeta) => void) | undefined;
};

export const defaultRetry: Required<RetryOptions> = {
  maxAttempts: 4,
  deadlineMs: 60_000,
  retryStatuses: [429, 503, 504],
  backoffMs: 200,
  maxBackoffMs: 5_000,
  jitter: 0.25,
};

export type Exchange = {
  fetch: typeof fetch;
  operation: Operation;
  method: string;
  url: string;
  headers: Record<string, string>;
  hooks: Hooks;
  /** The status of a successful answer (200 or 204). */
  expect: number;
  signal: AbortSignal;
  retry: Required<RetryOptions>;
  /** Each attempt's idle bound (bounds.ts). */
  idleTimeoutMs: number;
  /** Takes the key out of every error (scrub.ts). */
  scrub: Scrub;
  /** Waits, for tests; default: a timer that the signal cancels. */
  sleep?: ((ms: number, signal: AbortSignal) => Promise<void>) | undefined;
};

/** A timer that ends early, rejecting with the signal's reason, when the signal aborts. */
export const abortableSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });

/** One signal for the caller's signal and the timeout; `dispose` clears the timer. */
export const callSignal = (options: { signal?: AbortSignal | undefined; timeoutMs?: number | undefined }) => {
  const controller = new AbortController();
  const abort = (reason: unknown) => controller.abort(reason);
  const onCallerAbort = () => abort(options.signal?.reason);
  if (options.signal?.aborted) abort(options.signal.reason);
  else options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const timer =
    options.timeoutMs === undefined || options.timeoutMs > noBoundPast
      ? undefined
      : setTimeout(
          () => abort(new DOMException(`The call took longer than its timeout (${options.timeoutMs} ms)`, 'TimeoutError')),
          options.timeoutMs,
        );
  return {
    signal: controller.signal,
    dispose: () => {
      if (timer !== undefined) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onCallerAbort);
    },
  };
};

/** The wait before attempt `attempt + 1`: at least `Retry-After`, else an exponential backoff, plus jitter. */
export const retryDelayMs = (
  retry: Required<RetryOptions>,
  attempt: number,
  retryAfter: number | undefined,
  random = Math.random,
): number => {
  const base = retryAfter !== undefined ? retryAfter * 1000 : Math.min(retry.maxBackoffMs, retry.backoffMs * 2 ** (attempt - 1));
  return base + random() * retry.jitter * Math.max(base, retry.backoffMs);
};

/** What the caller does with the expected answer; it then owns `watch` (and disposes it once the body is read). */
export type Accept<T> = (response: Response, meta: CallMeta, watch: Watchdog) => Promise<T>;

/**
 * Sends the request until it gets `expect` (returning `accept(response, meta, watch)`), an answer
 * not worth retrying (thrown as its Error record; a redirect as `RedirectError`), or the attempts
 * or deadline run out (the last failure). `accept` runs inside the attempt: an error it throws
 * that is not a `StoreOrdersError` (a body cut while read, a stall) is a failed connection, and
 * retried like one. The hooks see each request, answer and retry; every error is scrubbed.
 */
export const exchange = async <T>(call: Exchange, accept: Accept<T>): Promise<T> => {
  try {
    return await attempts(call, accept);
  } catch (error) {
    throw error instanceof StoreOrdersError ? scrubError(error, call.scrub) : error;
  }
};

const attempts = async <T>(call: Exchange, accept: Accept<T>): Promise<T> => {
  const { retry, signal } = call;
  const sleep = call.sleep ?? abortableSleep;
  const deadline = Date.now() + retry.deadlineMs;
  let waited = 0;
  let last: StoreOrdersError | undefined;
  for (let attempt = 1; ; attempt++) {
    const event: RequestEvent = {
      operation: call.operation,
      method: call.method,
      url: call.url,
      attempt,
      headers: redactHeaders(call.headers),
    };
    const watch = new Watchdog(signal, call.idleTimeoutMs);
    let accepted = false;
    let failure: StoreOrdersError;
    try {
      const response = await send(call, event, watch);
      const requestId = requestIdOf(response, call.scrub);
      if (response.status === call.expect && !isRedirect(response)) {
        const meta: CallMeta = { operation: call.operation, status: response.status, requestId, attempts: attempt, retryDelayMs: waited };
        const value = await accept(response, meta, watch);
        accepted = true;
        return value;
      }
      failure = scrubError(await failureOf({ response, url: call.url, attempts: attempt, requestId, watch }), call.scrub);
      if (!retry.retryStatuses.includes(response.status) || failure instanceof RedirectError) throw failure;
    } catch (error) {
      failure = scrubError(retryable(error, call, watch, attempt, last), call.scrub);
    } finally {
      if (!accepted) watch.dispose();
    }
    last = failure;
    const wait = retryDelayMs(retry, attempt, failure.retryAfterSeconds);
    if (attempt >= retry.maxAttempts || Date.now() + wait > deadline) throw failure;
    await runHook(call.hooks.beforeRetry, { ...event, error: failure, delayMs: wait }).catch((hookFailure: HookFailure) => {
      throw hookFailure.cause;
    });
    await sleep(wait, signal).catch(() => {
      throw stopped(signal.reason, failure, attempt);
    });
    waited += wait;
  }
};

/** The failure of an attempt worth another one (a failed connection), or throws what ends the call. */
const retryable = (error: unknown, call: Exchange, watch: Watchdog, attempt: number, last: StoreOrdersError | undefined) => {
  if (error instanceof HookFailure) throw error.cause;
  if (call.signal.aborted) throw stopped(call.signal.reason, last, attempt);
  if (error instanceof StoreOrdersError && !(error instanceof ConnectionError)) throw error;
  if (error instanceof ConnectionError) return error;
  const message = watch.stalled
    ? `No answer from the service: it sent nothing for ${watch.idleTimeoutMs} ms (idleTimeoutMs)`
    : connectionMessage(error);
  return new ConnectionError({ code: 'client_connection_failed', status: 0, message, attempts: attempt, cause: error });
};

/**
 * The error of a call its signal stopped: a `TimeoutError` for the call's `timeoutMs` or a signal
 * that timed out, else an `AbortError` holding the reason; the last answer's error is the cause.
 */
export const stopped = (reason: unknown, last: StoreOrdersError | undefined, attempts: number): StoreOrdersError => {
  const said = typeof (reason as { message?: unknown } | null)?.message === 'string' ? (reason as Error).message : String(reason);
  const lastAnswer = last === undefined ? '' : ` (the last answer: ${last.status === 0 ? last.code : `HTTP ${last.status} ${last.code}`})`;
  const details = { status: 0, attempts, requestId: last?.requestId, cause: last ?? reason };
  if ((reason as { name?: unknown } | null)?.name === 'TimeoutError')
    return new TimeoutError({ ...details, code: 'client_timeout', message: `${said}${lastAnswer}` });
  return new AbortError({ ...details, code: 'client_aborted', message: `The call was aborted: ${said}${lastAnswer}`, reason });
};

/** What a hook threw: it fails the call as it is, never taken for a failed connection and retried. */
class HookFailure {
  readonly cause: unknown;
  constructor(cause: unknown) {
    this.cause = cause;
  }
}

const runHook = async <E>(hook: ((event: E) => void | Promise<void>) | undefined, event: E) => {
  try {
    await hook?.(event);
  } catch (error) {
    throw new HookFailure(error);
  }
};

/**
 * One request, watched until its headers arrive, with the hooks before and after it (the idle
 * bound paused while they run). `redirect: 'manual'`: a redirect is handed over as it is, never
 * followed (Node's fetch gives the 3xx with its Location; a browser an opaque redirect); `'error'`
 * would make it a network error, which looks like a failed connection and hides where it pointed.
 */
const send = async (call: Exchange, event: RequestEvent, watch: Watchdog): Promise<Response> => {
  watch.pause();
  await runHook(call.hooks.beforeRequest, event);
  watch.restart();
  const started = Date.now();
  const init: RequestInit = { method: call.method, headers: call.headers, redirect: 'manual', signal: watch.signal };
  const response = await watch.race(call.fetch(call.url, init));
  watch.pause();
  const answered = { ...event, status: response.status, requestId: requestIdOf(response, call.scrub), durationMs: Date.now() - started };
  await runHook(call.hooks.afterResponse, answered).catch(async (failure: unknown) => {
    await response.body?.cancel().catch(() => undefined);
    throw failure;
  });
  watch.restart();
  return response;
};

const requestIdOf = (response: Response, scrub: Scrub) => {
  const header = response.headers.get('x-request-id');
  return header === null ? undefined : scrub(header);
};

const connectionMessage = (error: unknown): string => {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  const detail = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return `No answer from the service: ${detail}`;
};
