/**
 * The route table: the one list of operations that the CDK stack, the local gateway and the
 * OpenAPI document are all built from.
 */
export const apiVersion = 'v1';
/** The base path of the stable API (v1): the stage's base URL ends with it. */
export const basePath = `/${apiVersion}`;

/** The API versions served side by side, each a path prefix (`/v1`, `/v2`). */
export type ApiVersion = 'v1' | 'v2';

export type Stability = 'stable' | 'beta' | 'experimental';

export type Route = {
  readonly operation: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path under its version's prefix, in API Gateway resource syntax (`{name}` for a path parameter). */
  readonly path: string;
  /** The version prefix the route is served under (default `v1`). */
  readonly apiVersion?: ApiVersion;
  /** The handler module, relative to the repository root; it exports `handler`. */
  readonly handlerFile: string;
  /** Lambda response streaming (API Gateway `responseTransferMode: STREAM`). */
  readonly streaming: boolean;
  readonly summary: string;
  readonly stability: Stability;
  /** A deprecated route answers with Deprecation, Sunset and Link headers (RFC 9745, RFC 8594). */
  readonly deprecation?: { readonly since: string; readonly sunset: string; readonly successor: string };
};

export const routes = [
  {
    operation: 'listOrders',
    method: 'GET',
    path: '/store/orders',
    handlerFile: 'functions/list-orders/handler.ts',
    streaming: true,
    summary: 'List every order',
    stability: 'stable',
  },
  {
    operation: 'cancelOrder',
    method: 'DELETE',
    path: '/store/orders/{orderId}',
    handlerFile: 'functions/cancel-order/handler.ts',
    streaming: false,
    summary: 'Cancel a pending order',
    stability: 'stable',
  },
  {
    operation: 'listOrdersPaged',
    method: 'GET',
    path: '/store/orders',
    apiVersion: 'v2',
    handlerFile: 'functions/list-orders-paged/handler.ts',
    streaming: false,
    summary: 'List orders in pages (filtered, resumable, splittable)',
    stability: 'experimental',
  },
] as const satisfies readonly Route[];

export type Operation = (typeof routes)[number]['operation'];

/** The table's route of an operation: what a handler passes to httpMiddleware. */
export const routeOf = (operation: Operation): Route => routes.find((route) => route.operation === operation)!;

/** The route's full resource path, its version prefix included: `/v1/store/orders/{orderId}`. */
export const resourcePath = (route: Route): string => `/${route.apiVersion ?? apiVersion}${route.path}`;

/** `/v1/store/orders/{orderId}` as a pattern of one path: each `{parameter}` one non-empty segment. */
const pathPattern = (route: Route) => new RegExp(`^${resourcePath(route).replace(/\{[^/}]+\}/g, '[^/]+')}$`);

/** The operation a method and full path (`/v1/…`) name, or undefined when no route matches. */
export const operationAt = (method: string, path: string): Operation | undefined =>
  routes.find((route) => route.method === method && pathPattern(route).test(path))?.operation;

/** The headers a deprecated route adds to every answer; none for a current route. */
export const deprecationHeaders = (route: Route): Record<string, string> => {
  if (route.deprecation === undefined) return {};
  const { since, sunset, successor } = route.deprecation;
  const sinceMs = Date.parse(since);
  const sunsetMs = Date.parse(sunset);
  // Called when a handler module loads: a bad table entry fails the cold start, not every answer.
  if (Number.isNaN(sinceMs) || Number.isNaN(sunsetMs) || sunsetMs < sinceMs) {
    throw new Error(`route ${route.operation}: deprecation needs ISO 8601 dates, sunset not before since`);
  }
  return {
    Deprecation: `@${Math.floor(sinceMs / 1000)}`,
    Sunset: new Date(sunsetMs).toUTCString(),
    Link: `<${successor}>; rel="successor-version"`,
  };
};
