/**
 * What a call tells about itself: hooks before each request, after each response and before each
 * retry (as AWS SDK middleware, Octokit's `hook.before`/`hook.after` and Stripe's
 * `on('request')`/`on('response')` do), and the metadata of a successful call. A hook never sees
 * the API key: headers reach it with `Authorization` redacted. Code that must see or change the
 * real request (the key included) is given it explicitly, as the client's `fetch` option.
 */
import type { StoreOrdersError } from './errors.ts';

/** The client's operations. */
export type Operation = 'listOrders' | 'listOrderPages' | 'cancelOrder';

/** A request about to be sent. `headers` are the request's, `Authorization` redacted. */
export type RequestEvent = {
  operation: Operation;
  method: string;
  url: string;
  /** 1 for the first request of the call, then 2, 3, … for its retries. */
  attempt: number;
  headers: Readonly<Record<string, string>>;
};

/** An answer received (any status, a redirect or an error included). */
export type ResponseEvent = RequestEvent & {
  status: number;
  /** The answer's `X-Request-Id`. */
  requestId: string | undefined;
  /** From sending the request to the answer's headers. */
  durationMs: number;
};

/** A retry about to wait: the failure of `attempt` and the wait before `attempt + 1`. */
export type RetryEvent = RequestEvent & { error: StoreOrdersError; delayMs: number };

/** Called in order and awaited; an error a hook throws fails the call. */
export type Hooks = {
  beforeRequest?: ((event: RequestEvent) => void | Promise<void>) | undefined;
  afterResponse?: ((event: ResponseEvent) => void | Promise<void>) | undefined;
  beforeRetry?: ((event: RetryEvent) => void | Promise<void>) | undefined;
};

/** What a successful call's answer said (AWS SDK's `$metadata`, Stripe's `lastResponse`). */
export type CallMeta = {
  operation: Operation;
  status: number;
  /** The successful answer's `X-Request-Id`. */
  requestId: string | undefined;
  /** Requests sent, retries included. */
  attempts: number;
  /** Time spent waiting between attempts, in milliseconds. */
  retryDelayMs: number;
};

const redacted = '[redacted]';

/** A request's headers as hooks see them: `Authorization` redacted, names in lower case. */
export const redactHeaders = (headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> =>
  Object.freeze(
    Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name.toLowerCase(), name.toLowerCase() === 'authorization' ? redacted : value]),
    ),
  );
