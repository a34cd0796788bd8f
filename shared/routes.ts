/**
 * What a route is, as its function carries it (each operation's `route.ts`) and the rest of the
 * house reads it from the registry (infra/registry.ts): method, path, version, streaming, stability,
 * deprecation; and what every function derives from one (its full path, its deprecation headers).
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
  /** Lambda response streaming (API Gateway `responseTransferMode: STREAM`). */
  readonly streaming: boolean;
  readonly summary: string;
  readonly stability: Stability;
  /** A deprecated route answers with Deprecation, Sunset and Link headers (RFC 9745, RFC 8594). */
  readonly deprecation?: { readonly since: string; readonly sunset: string; readonly successor: string };
};

/** What a route's path is made of: enough to match a request to it (the authorizer's operation-routes.ts holds only this). */
export type RoutePath = Pick<Route, 'operation' | 'method' | 'path' | 'apiVersion'>;

/** The route's full resource path, its version prefix included: `/v1/store/orders/{orderId}`. */
export const resourcePath = (route: Pick<Route, 'path' | 'apiVersion'>): string => `/${route.apiVersion ?? apiVersion}${route.path}`;

/** `/v1/store/orders/{orderId}` as a pattern of one path: each `{parameter}` one non-empty segment. */
const pathPattern = (route: RoutePath) => new RegExp(`^${resourcePath(route).replace(/\{[^/}]+\}/g, '[^/]+')}$`);

/** Whether a method and full path (`/v1/…`) name this route. */
export const routeMatches = (route: RoutePath, method: string, path: string): boolean =>
  route.method === method && pathPattern(route).test(path);

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
