/**
 * One request to the service with the client's retries: 429 and 503 (and 504) are sent again
 * after `Retry-After` plus jitter, a failed connection after a backoff, within a number of
 * attempts and a deadline; a redirect is refused, never followed; anything else that is not the
 * expected status becomes the `StoreOrdersError` of its Error record. Only `fetch`, `AbortSignal`
 * and timers: Node 20+ and browsers.
 */
import { ConnectionError, InvalidResponseError, RedirectError, StoreOrdersError, errorClassFor } from './errors.ts';
import { type CallMeta, type Hooks, type Operation, type RequestEvent, redactHeaders } from './hooks.ts';

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
  /** Aborts the call; it then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** Aborts the call after this many milliseconds (a `TimeoutError`); see each operation for what it covers. */
  timeoutMs?: number | undefined;
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
    options.timeoutMs === undefined
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

/** `Retry-After` in seconds: delta-seconds or an HTTP-date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export const retryAfterSeconds = (value: string | null, now = Date.now()): number | undefined => {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
};

/** The Error record of an answer, as the error to throw. */
export const errorFromResponse = async (response: Response, attempts: number): Promise<StoreOrdersError> => {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
  const text = await response.text().catch(() => '');
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    record = undefined;
  }
  const { code, message } = (record ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || typeof message !== 'string')
    return new InvalidResponseError({
      code: 'client_invalid_response',
      status: response.status,
      message: `HTTP ${response.status} without an Error record: ${text.slice(0, 200)}`,
      requestId,
      retryAfterSeconds: retryAfter,
      attempts,
    });
  const ErrorClass = errorClassFor(response.status, code);
  return new ErrorClass({ code, status: response.status, message, requestId, retryAfterSeconds: retryAfter, attempts });
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

/**
 * Sends the request until it gets `expect` (returning `accept(response, meta)`), an answer not
 * worth retrying (thrown as its Error record; a redirect as `RedirectError`), or the attempts or
 * deadline run out (the last failure). `accept` runs inside the attempt: an error it throws that
 * is not a `StoreOrdersError` or an abort (a body cut while read) is a failed connection, and
 * retried like one. The hooks see each request, answer and retry.
 */
export const exchange = async <T>(call: Exchange, accept: (response: Response, meta: CallMeta) => Promise<T>): Promise<T> => {
  const { retry, signal, hooks } = call;
  const sleep = call.sleep ?? abortableSleep;
  const deadline = Date.now() + retry.deadlineMs;
  let waited = 0;
  for (let attempt = 1; ; attempt++) {
    const event: RequestEvent = {
      operation: call.operation,
      method: call.method,
      url: call.url,
      attempt,
      headers: redactHeaders(call.headers),
    };
    let failure: StoreOrdersError;
    try {
      const response = await send(call, event);
      const meta: CallMeta = {
        operation: call.operation,
        status: response.status,
        requestId: requestIdOf(response),
        attempts: attempt,
        retryDelayMs: waited,
      };
      if (response.status === call.expect && !isRedirect(response)) return await accept(response, meta);
      failure = await failureOf(response, call.url, attempt);
      if (!retry.retryStatuses.includes(response.status) || failure instanceof RedirectError) throw failure;
    } catch (error) {
      if (error instanceof HookFailure) throw error.cause;
      if (signal.aborted) throw signal.reason;
      if (error instanceof StoreOrdersError && !(error instanceof ConnectionError)) throw error;
      failure = error instanceof ConnectionError ? error : connectionError(error, attempt);
    }
    const wait = retryDelayMs(retry, attempt, failure.retryAfterSeconds);
    if (attempt >= retry.maxAttempts || Date.now() + wait > deadline) throw failure;
    await runHook(hooks.beforeRetry, { ...event, error: failure, delayMs: wait }).catch((hookFailure: HookFailure) => {
      throw hookFailure.cause;
    });
    await sleep(wait, signal);
    waited += wait;
  }
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
 * One request, with the hooks before and after it. `redirect: 'manual'`: a redirect is handed
 * over as it is, never followed (Node's fetch gives the 3xx with its Location; a browser an opaque
 * redirect); `'error'` would make it a network error, which looks like a failed connection and
 * hides where it pointed.
 */
const send = async (call: Exchange, event: RequestEvent): Promise<Response> => {
  await runHook(call.hooks.beforeRequest, event);
  const started = Date.now();
  const response = await call.fetch(call.url, { method: call.method, headers: call.headers, redirect: 'manual', signal: call.signal });
  const answered = { ...event, status: response.status, requestId: requestIdOf(response), durationMs: Date.now() - started };
  await runHook(call.hooks.afterResponse, answered).catch(async (failure: unknown) => {
    await response.body?.cancel().catch(() => undefined);
    throw failure;
  });
  return response;
};

const requestIdOf = (response: Response) => response.headers.get('x-request-id') ?? undefined;

/**
 * A redirect: a 3xx (Node's fetch hands it over with `redirect: 'manual'`), a browser's opaque
 * redirect (status 0, headers hidden), or an answer a `fetch` of the caller's own reached by
 * following one (`redirected`).
 */
const isRedirect = (response: Response) =>
  response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400) || response.redirected;

/** The error an answer other than the expected one stands for. */
const failureOf = async (response: Response, url: string, attempts: number): Promise<StoreOrdersError> => {
  if (!isRedirect(response)) return errorFromResponse(response, attempts);
  await response.body?.cancel().catch(() => undefined);
  const header = response.redirected ? response.url : response.headers.get('location');
  const location = header === null || header === '' ? undefined : URL.canParse(header, url) ? new URL(header, url).href : header;
  const where = location ?? (response.type === 'opaqueredirect' ? 'a place the browser does not show' : 'no Location');
  return new RedirectError({
    code: 'client_redirect',
    status: response.status,
    message: `The answer was a redirect (${response.status || 'opaque'}) to ${where}; the client follows none: check baseUrl`,
    requestId: requestIdOf(response),
    attempts,
    location,
  });
};

const connectionError = (error: unknown, attempt: number) =>
  new ConnectionError({ code: 'client_connection_failed', status: 0, message: connectionMessage(error), attempts: attempt, cause: error });

const connectionMessage = (error: unknown): string => {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  const detail = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return `No answer from the service: ${detail}`;
};
