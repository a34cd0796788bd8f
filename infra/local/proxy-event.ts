/**
 * The REST API proxy event (payload 1.0) API Gateway sends a route's function once the authorizer
 * allowed the request, and the routing that finds the route. The local gateway (./gateway.ts)
 * builds it from an HTTP request; the shipped-bundle tests (test/shipped/deployed-stage.test.ts)
 * from a request they describe.
 */
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent } from 'aws-lambda';
import { resourcePath, type Route } from '../../shared/routes.ts';

/** The API a request reached, as its request context names it. */
export type ApiSite = {
  readonly accountId: string;
  readonly apiId: string;
  /** The API's default domain (`abc123.execute-api.us-east-1.amazonaws.com`); the local gateway has none. */
  readonly domainName?: string;
};

export const localApi: ApiSite = { accountId: '000000000000', apiId: 'local-api' };

/** Matches `/v1/store/orders/{orderId}`-style templates; the parameter is the raw path segment, URL-decoded. */
const matchPath = (template: string, path: string): Record<string, string> | undefined => {
  const want = template.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const parameters: Record<string, string> = {};
  for (const [i, part] of want.entries()) {
    const segment = got[i]!;
    const name = /^\{(.+)\}$/.exec(part)?.[1];
    if (name === undefined) {
      if (part !== segment) return undefined;
    } else {
      if (segment === '') return undefined;
      parameters[name] = safeDecode(segment);
    }
  }
  return parameters;
};

const safeDecode = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

export type RouteMatch = { readonly route: Route; readonly pathParameters: Record<string, string> };

/**
 * The path a request has once the slashes between the stage and it are merged (`//v1/…` is
 * `/v1/…`), as API Gateway reports it in the event's `path`; a trailing slash stays.
 */
export const eventPath = (path: string): string => path.replace(/^\/+/, '/');

/**
 * The path API Gateway matches against its resources: the event's path with a trailing slash
 * ignored. Nothing else is normalised: `.`, `..` and `%2e%2e` are segments like any other, and an
 * empty segment (`/store//orders`) matches no resource (docs/developing.md#small-decisions).
 */
export const routingPath = (path: string): string => {
  const merged = eventPath(path);
  return merged.length > 1 ? merged.replace(/\/+$/, '') : merged;
};

/**
 * The route a method and request path (`/v1/store/orders/7`, as sent) reach, with its path
 * parameters; undefined for API Gateway's 403 "Missing Authentication Token" (an unknown path or method).
 */
export const matchRoute = (routes: readonly Route[], method: string, requestPath: string): RouteMatch | undefined => {
  const urlPath = routingPath(requestPath);
  let match: RouteMatch | undefined;
  for (const route of routes) {
    const prefix = resourcePath(route).slice(0, -route.path.length);
    if (!urlPath.startsWith(`${prefix}/`)) continue;
    const pathParameters = route.method === method ? matchPath(route.path, urlPath.slice(prefix.length)) : undefined;
    if (pathParameters !== undefined) match = { route, pathParameters };
  }
  return match;
};

/**
 * Name → last value and name → every value, as the REST proxy event carries headers and query
 * parameters. Built through Maps: names come from the client, and assigning `__proto__` or
 * reading `constructor` on a plain object reaches Object.prototype (a 500 before this).
 */
const byName = (pairs: readonly (readonly [string, string])[]) => {
  const multi = new Map<string, string[]>();
  for (const [name, value] of pairs) multi.set(name, [...(multi.get(name) ?? []), value]);
  return {
    single: Object.fromEntries([...multi].map(([name, values]) => [name, values.at(-1)!])) as Record<string, string>,
    multi: Object.fromEntries(multi) as Record<string, string[]>,
  };
};

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** `$context.requestTime`'s format: `23/Nov/2026:12:00:00 +0000`. */
const requestTime = (epochMs: number) => {
  const at = new Date(epochMs);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(at.getUTCDate())}/${months[at.getUTCMonth()]}/${at.getUTCFullYear()}:${two(at.getUTCHours())}:${two(at.getUTCMinutes())}:${two(at.getUTCSeconds())} +0000`;
};

export type ProxyRequest = {
  readonly api: ApiSite;
  readonly stage: string;
  readonly requestId: string;
  readonly match: RouteMatch;
  /** The URL path the client asked for (`/v1/store/orders/7`). */
  readonly path: string;
  /** Header names and values in the order sent, repeats included. */
  readonly headers: readonly (readonly [string, string])[];
  readonly query: readonly (readonly [string, string])[];
  readonly body: string | null;
  /** What the authorizer returned: its principal and context reach the function. */
  readonly auth: Pick<APIGatewayAuthorizerResult, 'principalId' | 'context'>;
  readonly sourceIp: string;
  readonly protocol: string;
  readonly requestTimeEpoch: number;
};

export const proxyEvent = (request: ProxyRequest): APIGatewayProxyEvent => {
  const { api, stage, requestId, match, path, auth } = request;
  const { single: headers, multi: multiValueHeaders } = byName(request.headers);
  const { single: query, multi: multiQuery } = byName(request.query);
  const hasQuery = Object.keys(query).length > 0;
  const resource = resourcePath(match.route);
  // As Node reads it (the first of repeated User-Agent headers).
  const userAgent = request.headers.find(([name]) => name.toLowerCase() === 'user-agent')?.[1] ?? null;
  return {
    resource,
    path,
    httpMethod: match.route.method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: Object.keys(match.pathParameters).length > 0 ? match.pathParameters : null,
    stageVariables: null,
    body: request.body,
    isBase64Encoded: false,
    requestContext: {
      accountId: api.accountId,
      apiId: api.apiId,
      ...(api.domainName === undefined ? {} : { domainName: api.domainName, domainPrefix: api.domainName.split('.')[0]! }),
      authorizer: { principalId: auth.principalId, ...auth.context },
      protocol: request.protocol,
      httpMethod: match.route.method,
      path: `/${stage}${path}`,
      stage,
      requestId,
      extendedRequestId: requestId,
      requestTime: requestTime(request.requestTimeEpoch),
      requestTimeEpoch: request.requestTimeEpoch,
      resourceId: match.route.operation,
      resourcePath: resource,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: request.sourceIp,
        user: null,
        userAgent,
        userArn: null,
      },
    },
  };
};
