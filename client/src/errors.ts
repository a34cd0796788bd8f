/**
 * What a call can throw: always a `StoreOrdersError` (a `TypeError` for invalid arguments, and
 * what a hook or `onPage` of the caller's throws, aside). An Error record from the service becomes
 * the subclass for its status, with `code` as the exact discriminant; what happens on the way (the
 * connection, a cut list, an answer that is not the documented JSON or is past its bounds, a
 * timeout, an abort) has its own subclass with a `client_…` code.
 */

/**
 * The codes the service documents (docs/openapi.json; test/client/contract.test.ts keeps this
 * list and the document equal). The v2 list adds the last four.
 */
export const serviceErrorCodes = [
  'bad_request',
  'invalid_order_id',
  'unauthorized',
  'order_not_found',
  'route_not_found',
  'list_too_large',
  'order_already_shipped',
  'order_not_cancellable',
  'too_many_requests',
  'internal_error',
  'service_unavailable',
  'gateway_timeout',
  'invalid_query_parameter',
  'invalid_cursor',
  'cursor_expired',
  'cursor_mismatch',
] as const;

export type ServiceErrorCode = (typeof serviceErrorCodes)[number];

/** Codes of failures seen by the client itself, never sent by the service. */
export type ClientErrorCode =
  | 'client_connection_failed'
  | 'client_response_cut'
  | 'client_response_stalled'
  | 'client_response_too_large'
  | 'client_invalid_response'
  | 'client_cursor_repeated'
  | 'client_page_limit'
  | 'client_redirect'
  | 'client_timeout'
  | 'client_aborted';

/** A code the service may add later arrives as it is: `(string & {})` keeps the known ones suggested. */
export type ErrorCode = ServiceErrorCode | ClientErrorCode | (string & {});

export type StoreOrdersErrorDetails = {
  code: ErrorCode;
  status: number;
  message: string;
  /** The answer's `X-Request-Id`: quote it when reporting a problem. */
  requestId?: string | undefined;
  /** Seconds the answer's `Retry-After` asked for, when it had one. */
  retryAfterSeconds?: number | undefined;
  /** How many requests the call sent, retries included. */
  attempts?: number | undefined;
  cause?: unknown;
};

/** Every error a call throws (a `TypeError` for invalid arguments aside). */
export class StoreOrdersError extends Error {
  /** The class's name from `subclassNames` (the nearest one for a subclass of a subclass). */
  override name: string = nameOf(this.constructor);
  readonly code: ErrorCode;
  /** The HTTP status; 0 when no answer was received or it could not be read. */
  readonly status: number;
  readonly requestId: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly attempts: number;

  constructor(details: StoreOrdersErrorDetails) {
    super(details.message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = details.code;
    this.status = details.status;
    this.requestId = details.requestId;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.attempts = details.attempts ?? 1;
  }
}

/** 400: `bad_request`, `invalid_order_id`, `invalid_query_parameter` (the message names the parameter). */
export class BadRequestError extends StoreOrdersError {}
/** 400 on a v2 page: `invalid_cursor`, `cursor_expired`, `cursor_mismatch`. Start the read again without the cursor. */
export class InvalidCursorError extends BadRequestError {}
/** 401 `unauthorized`: the key is missing, unknown or revoked. */
export class UnauthorizedError extends StoreOrdersError {}
/** 404: `order_not_found`, or `route_not_found` (a base URL that is not the API's). */
export class NotFoundError extends StoreOrdersError {}
/** 406 `list_too_large`: the v1 list cannot carry the store; page through v2 instead. */
export class ListTooLargeError extends StoreOrdersError {}
/** 409: `order_already_shipped`, `order_not_cancellable`. */
export class ConflictError extends StoreOrdersError {}
/** 429 `too_many_requests`, after the client's retries (or one whose `Retry-After` was past the deadline). */
export class TooManyRequestsError extends StoreOrdersError {}
/** 500 `internal_error`. */
export class InternalServerError extends StoreOrdersError {}
/** 503 `service_unavailable`, 504 `gateway_timeout`, after the client's retries. */
export class ServiceUnavailableError extends StoreOrdersError {}
/** No answer: the connection failed on every attempt (`client_connection_failed`). */
export class ConnectionError extends StoreOrdersError {}
/**
 * `client_response_cut`: the v1 list stopped before its closing `]` (the service cuts the
 * connection when reading fails mid-list). The orders already yielded are real, but not all of
 * them: read again from the start, or page through v2 to resume.
 */
export class ResponseCutError extends StoreOrdersError {
  /** Orders yielded before the cut. */
  readonly ordersRead: number;
  constructor(details: StoreOrdersErrorDetails & { ordersRead: number }) {
    super(details);
    this.ordersRead = details.ordersRead;
  }
}
/**
 * `client_response_stalled`: the v1 list sent nothing for `idleTimeoutMs` (default 30 s) and
 * the client closed it. A `ResponseCutError`: the orders yielded are real, but not all of them.
 */
export class ResponseStalledError extends ResponseCutError {
  /** The idle bound that passed, in milliseconds. */
  readonly idleTimeoutMs: number;
  constructor(details: StoreOrdersErrorDetails & { ordersRead: number; idleTimeoutMs: number }) {
    super(details);
    this.idleTimeoutMs = details.idleTimeoutMs;
  }
}
/**
 * `client_response_too_large`: a v2 page, a v1 order or an error body past the client's bound
 * (`maxPageBytes`, `maxOrderBytes`, 64 KiB), counted after decompression. The client stopped
 * reading and closed the connection. In a v1 list, the orders yielded before it are real.
 */
export class ResponseTooLargeError extends StoreOrdersError {
  /** The bound that was passed, in bytes. */
  readonly limitBytes: number;
  /** Orders of a v1 list yielded before it (0 elsewhere). */
  readonly ordersRead: number;
  constructor(details: StoreOrdersErrorDetails & { limitBytes: number; ordersRead?: number | undefined }) {
    super(details);
    this.limitBytes = details.limitBytes;
    this.ordersRead = details.ordersRead ?? 0;
  }
}
/**
 * The answer is not what the contract says: `client_invalid_response` (not JSON, not an Error
 * record, an order without an id, an int64 member that is not a JSON integer within int64), or
 * `client_cursor_repeated` (a v2 page's `nextCursor` that this read was given before: the read
 * would loop, so it ends).
 */
export class InvalidResponseError extends StoreOrdersError {}
/**
 * `client_page_limit`: a v2 read took the `maxPages` pages it was allowed and the list goes on.
 * `cursor` resumes after the last page taken.
 */
export class PageLimitError extends StoreOrdersError {
  readonly maxPages: number;
  readonly cursor: string;
  constructor(details: StoreOrdersErrorDetails & { maxPages: number; cursor: string }) {
    super(details);
    this.maxPages = details.maxPages;
    this.cursor = details.cursor;
  }
}
/**
 * `client_timeout`: the call's `timeoutMs` passed, or its signal timed out (`AbortSignal.timeout`).
 * `cause` is the last answer's error when there was one (a 503 whose retry did not come in time).
 */
export class TimeoutError extends StoreOrdersError {}
/**
 * `client_aborted`: the caller's signal aborted the call. `reason` is the signal's reason; `cause`
 * the last answer's error when there was one, else the reason.
 */
export class AbortError extends StoreOrdersError {
  readonly reason: unknown;
  constructor(details: StoreOrdersErrorDetails & { reason: unknown }) {
    super(details);
    this.reason = details.reason;
  }
}
/**
 * `client_redirect`: the answer was a redirect (3xx). The client follows none, for any
 * operation: only the service's own answers count, and a redirect could send the key and the
 * request elsewhere. `status` is the 3xx (0 where a browser hides it), `location` where it pointed.
 */
export class RedirectError extends StoreOrdersError {
  /** The answer's `Location`, resolved against the request's URL; undefined when absent or hidden (a browser's opaque redirect). */
  readonly location: string | undefined;
  constructor(details: StoreOrdersErrorDetails & { location: string | undefined }) {
    super(details);
    this.location = details.location;
  }
}

/**
 * Each class's `name`, taken from its key here: a property name survives a minifier, a class's
 * own name may not. A class missing here is named after its nearest ancestor.
 */
const subclassNames: ReadonlyMap<unknown, string> = new Map(
  Object.entries({
    StoreOrdersError,
    BadRequestError,
    InvalidCursorError,
    UnauthorizedError,
    NotFoundError,
    ListTooLargeError,
    ConflictError,
    TooManyRequestsError,
    InternalServerError,
    ServiceUnavailableError,
    ConnectionError,
    ResponseCutError,
    ResponseStalledError,
    ResponseTooLargeError,
    InvalidResponseError,
    PageLimitError,
    TimeoutError,
    AbortError,
    RedirectError,
  }).map(([name, subclass]) => [subclass, name]),
);

function nameOf(subclass: unknown): string {
  for (let known = subclass; known !== null && known !== undefined; known = Object.getPrototypeOf(known)) {
    const name = subclassNames.get(known);
    if (name !== undefined) return name;
  }
  return 'StoreOrdersError';
}

/** The subclass for each status the service answers with. */
const byStatus: ReadonlyMap<number, typeof StoreOrdersError> = new Map([
  [400, BadRequestError],
  [401, UnauthorizedError],
  [404, NotFoundError],
  [406, ListTooLargeError],
  [409, ConflictError],
  [429, TooManyRequestsError],
  [500, InternalServerError],
  [503, ServiceUnavailableError],
  [504, ServiceUnavailableError],
]);

/** Codes whose subclass narrows their status's (used only when it does: a subclass of it). */
const byCode: ReadonlyMap<string, typeof StoreOrdersError> = new Map<ServiceErrorCode, typeof StoreOrdersError>([
  ['invalid_cursor', InvalidCursorError],
  ['cursor_expired', InvalidCursorError],
  ['cursor_mismatch', InvalidCursorError],
]);

/** The subclass for an Error record of this status and code. */
export const errorClassFor = (status: number, code: string): typeof StoreOrdersError => {
  const ofStatus = byStatus.get(status) ?? StoreOrdersError;
  const ofCode = byCode.get(code);
  return ofCode !== undefined && ofCode.prototype instanceof ofStatus ? ofCode : ofStatus;
};
