/** @store-orders/client: the Store Orders API's client (README.md). */
export { StoreOrdersClient, clientDefaults } from './client.ts';
export { clientUserAgent, clientVersion } from './version.ts';
export type { ListOptions, StoreOrdersClientOptions } from './client.ts';
export { int64Fields } from './order.ts';
export type { Order, OrderPage } from './order.ts';
export type { Checkpoint, CollectOptions, OrderPageQuery, OrderStatus, PagedOptions, ReadLimits, SplitReadOptions } from './paging.ts';
export {
  AbortError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  InternalServerError,
  InvalidCursorError,
  InvalidResponseError,
  ListTooLargeError,
  NotFoundError,
  PageLimitError,
  RedirectError,
  ResponseCutError,
  ResponseStalledError,
  ResponseTooLargeError,
  ServiceUnavailableError,
  StoreOrdersError,
  TimeoutError,
  TooManyRequestsError,
  UnauthorizedError,
  serviceErrorCodes,
} from './errors.ts';
export type { ClientErrorCode, ErrorCode, ServiceErrorCode, StoreOrdersErrorDetails } from './errors.ts';
export type { CallMeta, Hooks, Operation, RequestEvent, ResponseEvent, RetryEvent } from './hooks.ts';
export type { CallOptions, RetryOptions } from './http.ts';
export { JsonSyntaxError, parseJsonExact } from './json.ts';
export { JsonArrayStream, JsonElementTooLargeError } from './json-stream.ts';
export type { JsonArrayStreamOptions } from './json-stream.ts';
export type { components, operations, paths } from './generated/openapi.ts';
