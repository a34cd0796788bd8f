/** @store-orders/client: the Store Orders API's client (README.md). */
export { StoreOrdersClient, int64Fields } from './client.ts';
export type { Order, OrderPage, OrderPageQuery, OrderStatus, StoreOrdersClientOptions } from './client.ts';
export {
  BadRequestError,
  ConflictError,
  ConnectionError,
  InternalServerError,
  InvalidCursorError,
  InvalidResponseError,
  ListTooLargeError,
  NotFoundError,
  ResponseCutError,
  ServiceUnavailableError,
  StoreOrdersError,
  TooManyRequestsError,
  UnauthorizedError,
  serviceErrorCodes,
} from './errors.ts';
export type { ClientErrorCode, ErrorCode, ServiceErrorCode, StoreOrdersErrorDetails } from './errors.ts';
export type { CallOptions, RetryOptions } from './http.ts';
export { JsonArrayStream, JsonSyntaxError, parseJsonExact } from './json.ts';
export type { components, operations, paths } from './generated/openapi.ts';
