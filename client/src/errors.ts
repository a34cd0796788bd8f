/**
 * What a call can throw. An Error record from the service becomes a `StoreOrdersError` of the
 * subclass for its status, with `code` as the exact discriminant; what happens on the way (the
 * connection, a cut list, an answer that is not the documented JSON) has its own subclasses of
 * `StoreOrdersError` with a `client_…` code and status 0. An abort or timeout rejects with the
 * signal's reason, as `fetch` does (`AbortError` or `TimeoutError`).
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
export type ClientErrorCode = 'client_connection_failed' | 'client_response_cut' | 'client_invalid_response';

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

/** Every error the client throws (abort and timeout aside). */
export class StoreOrdersError extends Error {
  override name = 'StoreOrdersError';
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
export class BadRequestError extends StoreOrdersError {
  override name = 'BadRequestError';
}
/** 400 on a v2 page: `invalid_cursor`, `cursor_expired`, `cursor_mismatch`. Start the read again without the cursor. */
export class InvalidCursorError extends BadRequestError {
  override name = 'InvalidCursorError';
}
/** 401 `unauthorized`: the key is missing, unknown or revoked. */
export class UnauthorizedError extends StoreOrdersError {
  override name = 'UnauthorizedError';
}
/** 404: `order_not_found`, or `route_not_found` (a base URL that is not the API's). */
export class NotFoundError extends StoreOrdersError {
  override name = 'NotFoundError';
}
/** 406 `list_too_large`: the v1 list cannot carry the store; page through v2 instead. */
export class ListTooLargeError extends StoreOrdersError {
  override name = 'ListTooLargeError';
}
/** 409: `order_already_shipped`, `order_not_cancellable`. */
export class ConflictError extends StoreOrdersError {
  override name = 'ConflictError';
}
/** 429 `too_many_requests`, after the client's retries (or one whose `Retry-After` was past the deadline). */
export class TooManyRequestsError extends StoreOrdersError {
  override name = 'TooManyRequestsError';
}
/** 500 `internal_error`. */
export class InternalServerError extends StoreOrdersError {
  override name = 'InternalServerError';
}
/** 503 `service_unavailable`, 504 `gateway_timeout`, after the client's retries. */
export class ServiceUnavailableError extends StoreOrdersError {
  override name = 'ServiceUnavailableError';
}
/** No answer: the connection failed on every attempt (`client_connection_failed`). */
export class ConnectionError extends StoreOrdersError {
  override name = 'ConnectionError';
}
/**
 * `client_response_cut`: the v1 list stopped before its closing `]` (the service cuts the
 * connection when reading fails mid-list). The orders already yielded are real, but not all of
 * them: read again from the start, or page through v2 to resume.
 */
export class ResponseCutError extends StoreOrdersError {
  override name = 'ResponseCutError';
  /** Orders yielded before the cut. */
  readonly ordersRead: number;
  constructor(details: StoreOrdersErrorDetails & { ordersRead: number }) {
    super(details);
    this.ordersRead = details.ordersRead;
  }
}
/** `client_invalid_response`: the answer is not what the contract says (not JSON, not an Error record, an order without an id). */
export class InvalidResponseError extends StoreOrdersError {
  override name = 'InvalidResponseError';
}

const cursorCodes: ReadonlySet<string> = new Set(['invalid_cursor', 'cursor_expired', 'cursor_mismatch']);

/** The subclass for an Error record of this status and code. */
export const errorClassFor = (status: number, code: string): typeof StoreOrdersError => {
  if (status === 400) return cursorCodes.has(code) ? InvalidCursorError : BadRequestError;
  const byStatus: Record<number, typeof StoreOrdersError> = {
    401: UnauthorizedError,
    404: NotFoundError,
    406: ListTooLargeError,
    409: ConflictError,
    429: TooManyRequestsError,
    500: InternalServerError,
    503: ServiceUnavailableError,
    504: ServiceUnavailableError,
  };
  return byStatus[status] ?? StoreOrdersError;
};
