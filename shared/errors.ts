import { createError, HttpError } from '@middy/util';
import { type ErrorRecord, stringBounds } from './schemas.ts';

/**
 * The one table of error codes. The functions, the API Gateway responses (infra) and the
 * local gateway all build their Error records from it, so a code means the same everywhere.
 */
export const errorCodes = {
  bad_request: { status: 400, message: 'The request is malformed.' },
  invalid_query_parameter: { status: 400, message: 'A query parameter is malformed or out of range.' },
  invalid_cursor: {
    status: 400,
    message: 'cursor is not a cursor of this API and stage (or was altered): pass nextCursor unchanged, or start again without one.',
  },
  cursor_expired: { status: 400, message: 'cursor has expired: start the read again without a cursor.' },
  cursor_mismatch: {
    status: 400,
    message: 'cursor was made for other status, shipDateFrom, shipDateTo, part or parts values: send the same ones as the first request.',
  },
  invalid_order_id: { status: 400, message: 'orderId must be a base-10 integer between -9223372036854775808 and 9223372036854775807.' },
  unauthorized: { status: 401, message: 'A valid API key is required: send it as "Authorization: Bearer <API_KEY>".' },
  order_not_found: { status: 404, message: 'No order exists with this orderId.' },
  route_not_found: { status: 404, message: 'No operation exists at this path and method.' },
  order_already_shipped: { status: 409, message: 'The order has already shipped and cannot be cancelled.' },
  order_not_cancellable: { status: 409, message: 'The order is not pending and cannot be cancelled.' },
  list_too_large: {
    status: 406,
    message:
      'The store holds more orders than one response can carry: send "Accept-Encoding: gzip", or read it in pages with GET /v2/store/orders.',
  },
  // Only the local gateway answers it: a request whose Host names none of its own names (a web
  // page rebound to 127.0.0.1 sends its own). RFC 9110 §15.5.20: the server is not configured to
  // answer for the target's authority; no key would change that, so not 401 or 403.
  misdirected_request: {
    status: 421,
    message:
      'This server does not answer for the host name this request was sent to: use the address the service printed, or add the name to ALLOWED_HOSTS.',
  },
  too_many_requests: { status: 429, message: 'Too many requests: slow down and retry later.' },
  internal_error: { status: 500, message: 'An unexpected error occurred. Quote the X-Request-Id header when reporting it.' },
  service_unavailable: { status: 503, message: 'The service is temporarily unavailable: retry later.' },
  gateway_timeout: {
    status: 504,
    message: 'The service did not answer in time: retry later. Quote the X-Request-Id header if it persists.',
  },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errorCodes;

/** The Error record for a code; `message` overrides the table's text where more can be said. */
export const errorRecord = (code: ErrorCode, message?: string): ErrorRecord => ({
  code,
  message: message ?? errorCodes[code].message,
  status: errorCodes[code].status,
});

/** The 409 message for an order in another non-pending status (`undefined`: it has none). */
export const notCancellableMessage = (status: string | undefined): string => {
  if (status === undefined) return 'The order has no status and cannot be cancelled.';
  // A status longer than an Order's may be breaks the table contract: quoting it would stretch
  // the message past Error.message's bound, so the table's text is used instead.
  if (status.length > stringBounds.orderStatus) return errorCodes.order_not_cancellable.message;
  return `The order is ${JSON.stringify(status)}, not "pending", and cannot be cancelled.`;
};

/** The 406 message when the store holds more orders than the list may send (see docs/api.md#limits-of-the-deployed-list). */
export const listTooLargeMessage = (itemCount: number, gzip: boolean, limits: { plain: number; gzip: number }): string =>
  gzip || itemCount > limits.gzip
    ? `The store holds about ${itemCount} orders, more than one response can carry (${limits.gzip} with gzip): read it in pages with GET /v2/store/orders.`
    : `The store holds about ${itemCount} orders, more than one uncompressed response can carry (${limits.plain}): send "Accept-Encoding: gzip".`;

/** Headers every error of this code carries besides Content-Type. */
export const errorHeaders = (code: ErrorCode): Record<string, string> => {
  if (code === 'unauthorized') return { 'WWW-Authenticate': 'Bearer' };
  if (code === 'service_unavailable' || code === 'too_many_requests' || code === 'gateway_timeout') return { 'Retry-After': '1' };
  return {};
};

/**
 * An error the middy error handler turns into an Error record. The message is the record's
 * JSON, which `@middy/http-error-handler` sends as an application/json body; `expose` is set
 * even for 5xx because the record's text was written for clients and holds no internals.
 */
export const apiError = (code: ErrorCode, message?: string, options?: { cause?: unknown }) => {
  const record = errorRecord(code, message);
  return Object.assign(createError(record.status, JSON.stringify(record), { expose: true, cause: options?.cause }), {
    code,
    headers: errorHeaders(code),
  });
};

export type ApiError = ReturnType<typeof apiError>;

export const isApiError = (error: unknown): error is ApiError =>
  error instanceof HttpError && typeof error.code === 'string' && error.code in errorCodes;

/**
 * The answers API Gateway gives on its own (no function involved), by gateway response type,
 * each rewritten into an Error record of this table with the code's status. The deployed stack
 * and the local gateway both use it.
 */
export const gatewayResponseCodes = {
  UNAUTHORIZED: 'unauthorized',
  // Our authorizer never returns Deny; should a policy ever not match, the client still gets 401, not 403.
  ACCESS_DENIED: 'unauthorized',
  // The authorizer's usage identifier is in no usage plan (403 by default): the key was revoked
  // (its API key deleted) while an Allow was cached, or a key issued before usage plans.
  INVALID_API_KEY: 'unauthorized',
  // API Gateway's answer to an unknown path or method is a 403 "Missing Authentication Token".
  MISSING_AUTHENTICATION_TOKEN: 'route_not_found',
  RESOURCE_NOT_FOUND: 'route_not_found',
  THROTTLED: 'too_many_requests',
  QUOTA_EXCEEDED: 'too_many_requests',
  // AWS WAF blocked the request (403 by default): its source address sent more than the stage's
  // rate per address, or is on AWS's IP reputation list. Either ends on its own (the address slows
  // down; AWS takes it off its list), and a valid key would change neither: 429, not 401 or 403
  // (docs/decisions/0931-a-web-acl-in-front-of-each-stage.md). The local gateway's stand-in answers so too.
  WAF_FILTERED: 'too_many_requests',
  AUTHORIZER_FAILURE: 'internal_error',
  AUTHORIZER_CONFIGURATION_ERROR: 'internal_error',
  // A customized DEFAULT_5XX also sets the status of every 5xx type not set on its own: these
  // keep theirs. A throttled function: Lambda's docs say API Gateway answers 500 when Lambda
  // rejects the invocation, without naming the gateway response type, so a client may get this
  // 503 or DEFAULT_5XX's 500; both are Error records (docs/api.md#operations-and-errors; docs/decisions.md).
  INTEGRATION_FAILURE: 'service_unavailable',
  INTEGRATION_TIMEOUT: 'gateway_timeout',
  DEFAULT_4XX: 'bad_request',
  DEFAULT_5XX: 'internal_error',
} as const satisfies Record<string, ErrorCode>;

export type GatewayResponseType = keyof typeof gatewayResponseCodes;

/**
 * The authorizer's context key holding the seconds until its key's daily quota starts afresh
 * (functions/authorizer/api-keys.ts, secondsUntilQuotaReset), computed at each authorization.
 */
export const quotaResetContextKey = 'quotaResetSeconds';

/**
 * Headers of a gateway response whose value comes from the authorization's context (deployed:
 * `context.authorizer.<key>`; locally: the cached authorization result), by header name. A gateway
 * response cannot compute a value (its templates are not processed as VTL; its headers map request
 * values, context variables or static text), so QUOTA_EXCEEDED's Retry-After, which counts to
 * 00:00 UTC, is computed by the authorizer and cached with its Allow: it may count up to the cache
 * TTL too long, never too short (docs/decisions/0017-limits-are-usage-plans-keyed-by-the-authorizer.md).
 */
export const authorizerContextHeaders: Partial<Record<GatewayResponseType, Record<string, string>>> = {
  QUOTA_EXCEEDED: { 'Retry-After': quotaResetContextKey },
};

/** The static headers of a gateway response besides Content-Type: its code's, less those its authorization's context sets. */
export const gatewayResponseHeaders = (type: GatewayResponseType): Record<string, string> => {
  const mapped = authorizerContextHeaders[type] ?? {};
  return Object.fromEntries(Object.entries(errorHeaders(gatewayResponseCodes[type])).filter(([name]) => !(name in mapped)));
};
