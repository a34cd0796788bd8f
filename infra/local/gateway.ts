/**
 * A local stand-in for the deployed API Gateway REST API: HTTP request → REST proxy event →
 * TOKEN authorizer → the very same handler module Lambda runs → HTTP response. It mirrors
 * the gateway's own behaviour (routing, 401 before the authorizer, policy caching, gateway
 * error responses as Error records) and holds no business logic. Its parts: the HTTP server and
 * its bounds (./gateway-server.ts), reading requests (./gateway-requests.ts), the proxy event
 * (./proxy-event.ts), the Lambda runtime stand-in (./lambda-runtime.ts) and writing answers
 * (./gateway-responses.ts).
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { authorizationHeaderPattern } from '../../functions/authorizer/api-keys.ts';
import { type ErrorCode, errorHeaders, type GatewayResponseType } from '../../shared/errors.ts';
import { basePath, resourcePath, type Route } from '../../shared/routes.ts';
import { type AuthorizerCache, createAuthorizerCache, policyAllows } from './authorizer-cache.ts';
import { declaredBodyBytes, maxBodyBytes, readBody, type RequestTarget, requestTarget } from './gateway-requests.ts';
import { hostAllowed } from './gateway-hosts.ts';
import { GatewayResponseStream, sendError, sendGatewayResponse, writeProxyResult } from './gateway-responses.ts';
import { type ClientBounds, clientBounds, createGatewayServer } from './gateway-server.ts';
import type { ConnectionShares } from './gateway-shares.ts';
import {
  type Authorizer,
  type BufferedHandler,
  type FunctionIdentity,
  invokeWithTimeout,
  isStreamingHandler,
  type LambdaHandler,
} from './lambda-runtime.ts';
import { eventPath, localApi, matchRoute, proxyEvent, type RouteMatch, routingPath } from './proxy-event.ts';
import type { RateLimiter } from './rate-limits.ts';
import type { Throttling } from '../tiers.ts';
import { type AuthorizationTurns, authorizationTurns } from './address-limits.ts';

/** A function as the local gateway runs it: its handler and the settings Lambda gives it (infra/function-settings.ts). */
export type LocalFunction<Handler> = FunctionIdentity & {
  readonly handler: Handler;
  /** Lambda's reserved concurrency: an invocation beyond it is throttled (API Gateway: INTEGRATION_FAILURE). */
  readonly reservedConcurrency?: number;
};

export type GatewayOptions = {
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly stage?: string;
  readonly routes: readonly Route[];
  /** Each route's function (the module's `handler` export, loaded once like a warm Lambda). */
  readonly functions: ReadonlyMap<Route, LocalFunction<LambdaHandler>>;
  readonly authorizer: LocalFunction<Authorizer>;
  /** API Gateway caches an Allow per token for this long; 0 disables the cache. */
  readonly authorizerCacheTtlSeconds: number;
  /**
   * Per-key limits, as the stage's usage plans apply them: every route then requires the
   * authorizer's usage identifier (API Gateway's apiKeyRequired), and the key's tier comes
   * from the authorizer's context (cached with its Allow).
   */
  readonly rateLimiter?: RateLimiter;
  /** The `Authorization` values let through to the authorizer (API Gateway's identity validation expression; default any bearer token). */
  readonly authorizationPattern?: RegExp;
  /**
   * The stand-in for the stage's firewall: authorizations of keys not cached, per client address
   * (./address-limits.ts). Unset: none.
   */
  readonly authorizationsPerAddress?: Throttling;
  /** Extra GET documents served without a key (e.g. `/v1/openapi.json`), path → JSON text. */
  readonly documents?: Readonly<Record<string, () => string>>;
  /** Tests shorten these; `npm start` runs with `clientBounds`. */
  readonly clientBounds?: Partial<ClientBounds>;
  /** Host names answered besides 127.0.0.1, localhost and [::1] on the gateway's port (`ALLOWED_HOSTS`; ./gateway-hosts.ts). */
  readonly allowedHosts?: readonly string[];
};

/** How long `npm start` lets requests in flight finish once told to stop (docs/operating.md#reliability). */
export const drainMs = 5_000;

export type Gateway = {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  /**
   * Stops taking connections and lets the requests in flight finish for up to `drainMs`
   * (default 0); whatever still runs then, a streaming list included, is cut: its client sees
   * the connection close before the body's end. Resolves once every connection is closed.
   */
  close(options?: { readonly drainMs?: number }): Promise<void>;
};

/** What the gateway holds while it runs, beside its options. */
type GatewayState = {
  readonly options: GatewayOptions;
  readonly stage: string;
  readonly authorizerCache: AuthorizerCache;
  /** Invocations under way per function, against its reserved concurrency. */
  readonly running: Map<LocalFunction<LambdaHandler>, number>;
  /** Requests under way, whether or not their client is still connected (Lambda would finish them too). */
  readonly inFlight: Set<Promise<void>>;
  draining: boolean;
  /** The port the gateway listens on, once it does: the loopback names are answered with it only. */
  port: number;
  readonly bounds: ClientBounds;
  /** Each key's and each address's share of the connections (./gateway-shares.ts), once the server exists. */
  shares?: ConnectionShares;
  /** Turns at the authorizer per client address, where the options set a rate. */
  readonly turns?: AuthorizationTurns;
};

export const startGateway = async (options: GatewayOptions): Promise<Gateway> => {
  const gateway: GatewayState = {
    options,
    stage: options.stage ?? 'local',
    authorizerCache: createAuthorizerCache({ ttlSeconds: options.authorizerCacheTtlSeconds }),
    running: new Map(),
    inFlight: new Set(),
    draining: false,
    port: 0,
    bounds: { ...clientBounds, ...options.clientBounds },
    ...(options.authorizationsPerAddress === undefined ? {} : { turns: authorizationTurns(options.authorizationsPerAddress) }),
  };
  const { server, shares } = createGatewayServer((req, res) => track(gateway, server, req, res), gateway.bounds);
  gateway.shares = shares;
  server.listen(options.port, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  gateway.port = port;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}${basePath}`,
    port,
    server,
    close: ({ drainMs = 0 } = {}) => close(gateway, server, drainMs),
  };
};

/** Runs one request, keeping it in the gateway's in-flight set until its work is done. */
const track = (gateway: GatewayState, server: Server, req: IncomingMessage, res: ServerResponse) => {
  // While draining, a keep-alive connection is closed as soon as its answer is complete.
  res.on('close', () => {
    if (gateway.draining) setImmediate(() => server.closeIdleConnections());
  });
  const work = handle(gateway, req, res).catch((error: unknown) => {
    // The client left (its connection closed): nobody to answer, nothing failed here.
    if (res.destroyed && !res.writableFinished && req.socket.destroyed) return;
    // A handler that throws is a Lambda function error: the gateway answers 500 (DEFAULT_5XX).
    console.error(JSON.stringify({ level: 'ERROR', message: 'local gateway: handler failed', error: String(error) }));
    sendError(res, randomUUID(), 'internal_error');
  });
  gateway.inFlight.add(work);
  void work.finally(() => gateway.inFlight.delete(work));
};

/** Gateway.close: no new connections, the requests in flight given `drainMs`, then every connection cut. */
const close = async (gateway: GatewayState, server: Server, drainMs: number) => {
  gateway.draining = true;
  const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  server.closeIdleConnections();
  const drained = (async () => {
    while (gateway.inFlight.size > 0) await Promise.allSettled([...gateway.inFlight]);
  })();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, drainMs)))]);
  clearTimeout(timer);
  // What still runs now (a list still streaming) is cut.
  server.closeAllConnections();
  await closed;
};

/**
 * One request, in API Gateway's order: a document, or a route (404 without one); the size it
 * announces; its key (its pattern, the authorizer, then the usage plan) before any of its body is
 * read; its body; then its function.
 */
const handle = async (gateway: GatewayState, req: IncomingMessage, res: ServerResponse) => {
  const requestId = randomUUID();
  const target = requestTarget(req);
  const refusal = hostRefusal(gateway, req, target);
  if (refusal !== undefined) return sendError(res, requestId, refusal);
  const method = req.method ?? 'GET';
  if (serveDocument(gateway, target, method, res, requestId)) return;

  // Unknown path or method: API Gateway's 403 "Missing Authentication Token", rewritten to 404.
  const match = matchRoute(gateway.options.routes, method, target.path);
  if (match === undefined) return sendError(res, requestId, 'route_not_found');
  if (declaredBodyBytes(req) > maxBodyBytes) return sendError(res, requestId, 'bad_request');

  // Who sends the request is settled before any of its body is read: a client without an
  // accepted key gets its answer, and no `100 Continue`, however much it means to send.
  // The gateway checks the identity source against its validation pattern before the authorizer runs.
  const authorization = req.headers.authorization;
  const pattern = gateway.options.authorizationPattern ?? authorizationHeaderPattern;
  if (authorization === undefined || !pattern.test(authorization)) return sendError(res, requestId, 'unauthorized');
  const auth = await authorize(gateway, req, res, authorization, methodArn(gateway, method, match.route));
  if (auth === 'WAF_FILTERED') return sendGatewayResponse(res, requestId, auth);
  if (typeof auth === 'string') return sendError(res, requestId, auth);
  const overLimit = limitRefusal(gateway, auth, match.route);
  if (overLimit !== undefined) return sendGatewayResponse(res, requestId, overLimit, auth);
  // One key holds at most its share of the connections with requests under way: one more is
  // refused as a throttle, before its body is waited for.
  if (!gateway.shares!.admitKey(res, auth.principalId)) return sendGatewayResponse(res, requestId, 'THROTTLED');
  if (/^100-continue$/i.test(req.headers.expect ?? '')) res.writeContinue();
  const read = await readBody(req, { graceMs: gateway.bounds.bodyGraceMs, minBytesPerSecond: gateway.bounds.minBodyBytesPerSecond });
  if ('gone' in read) return;
  if ('refused' in read) return sendError(res, requestId, 'bad_request', errorHeaders('bad_request'), read.refused);

  await invokeRoute(gateway, match.route, eventOf(gateway, req, target, match, requestId, read.body, auth), res, requestId);
};

/**
 * Why a request is refused for its host, before anything else is read: RFC 9112 §3.2 answers 400
 * to an HTTP/1.1 request without Host and to any request with more than one; a host the gateway
 * does not answer for gets 421 (./gateway-hosts.ts). An absolute-form target's authority stands
 * for Host (RFC 9112 §3.2.2).
 */
const hostRefusal = (gateway: GatewayState, req: IncomingMessage, target: RequestTarget): ErrorCode | undefined => {
  const hosts = req.rawHeaders.filter((name, i) => i % 2 === 0 && name.toLowerCase() === 'host').length;
  if (hosts > 1 || (req.httpVersion === '1.1' && hosts === 0)) return 'bad_request';
  const host = target.authority ?? req.headers.host;
  if (host === undefined) return undefined;
  return hostAllowed(host, { port: gateway.port, allowed: gateway.options.allowedHosts ?? [] }) ? undefined : 'misdirected_request';
};

/** A GET of one of the extra documents (served without a key); false when the request is none. */
const serveDocument = (gateway: GatewayState, target: RequestTarget, method: string, res: ServerResponse, requestId: string) => {
  const { documents = {} } = gateway.options;
  const path = routingPath(target.path);
  // Own properties only: a client's path must not reach Object.prototype.
  const document = Object.hasOwn(documents, path) ? documents[path] : undefined;
  if (document === undefined || method !== 'GET') return false;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache', 'X-Request-Id': requestId });
  res.end(document());
  return true;
};

/** The method ARN the authorizer is asked about, as API Gateway forms it: the resource path with its version prefix. */
const methodArn = (gateway: GatewayState, method: string, route: Route) =>
  `arn:aws:execute-api:local:000000000000:local-api/${gateway.stage}/${method}${resourcePath(route)}`;

/**
 * API Gateway semantics: `Unauthorized` → 401, any other failure → 500, Deny → 403 (sent as 401
 * here, as deployed). The result is cached by the identity source's value, and its policy is
 * evaluated against this request's method ARN whether it came from the cache or not. A key not
 * cached waits for its address's turn at the authorizer, where the gateway plays the firewall
 * (./address-limits.ts): without one, WAF_FILTERED. Its connection is known from then on by what
 * the authorizer or the firewall said (./gateway-shares.ts).
 */
const authorize = async (
  gateway: GatewayState,
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
  methodArn: string,
): Promise<APIGatewayAuthorizerResult | ErrorCode | 'WAF_FILTERED'> => {
  let result = gateway.authorizerCache.get(token);
  if (result === undefined) {
    const shares = gateway.shares!;
    const connection = { standing: shares.standing(req), refuse: () => shares.refused(req) };
    const turn = await gateway.turns?.take(req.socket.remoteAddress ?? '', connection, res);
    if (gateway.turns !== undefined && turn === undefined) return 'WAF_FILTERED';
    const authorizer: LocalFunction<Authorizer> = gateway.options.authorizer;
    try {
      const event: APIGatewayTokenAuthorizerEvent = { type: 'TOKEN', authorizationToken: token, methodArn };
      result = await invokeWithTimeout(authorizer, (context) => authorizer.handler(event, context));
    } catch (error) {
      if (!(error instanceof Error && error.message === 'Unauthorized')) return 'internal_error';
      connection.refuse();
      return 'unauthorized';
    } finally {
      turn?.();
    }
    gateway.authorizerCache.set(token, result);
  }
  return policyAllows(result, methodArn) ? result : 'unauthorized';
};

/**
 * API Gateway's usage plan check, after the authorizer: no usage identifier is INVALID_API_KEY,
 * a key over its tier's limits THROTTLED or QUOTA_EXCEEDED. Undefined when the request may go on.
 */
const limitRefusal = (gateway: GatewayState, auth: APIGatewayAuthorizerResult, route: Route): GatewayResponseType | undefined => {
  const { rateLimiter } = gateway.options;
  if (rateLimiter === undefined) return undefined;
  const usageKey = auth.usageIdentifierKey;
  if (typeof usageKey !== 'string' || usageKey === '') return 'INVALID_API_KEY';
  const tier = auth.context?.tier;
  return rateLimiter.admit(usageKey, typeof tier === 'string' ? tier : undefined, route);
};

const eventOf = (
  gateway: GatewayState,
  req: IncomingMessage,
  target: RequestTarget,
  match: RouteMatch,
  requestId: string,
  body: string | null,
  auth: APIGatewayAuthorizerResult,
): APIGatewayProxyEvent => {
  const headers: [string, string][] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
  return proxyEvent({
    api: localApi,
    stage: gateway.stage,
    requestId,
    match,
    path: eventPath(target.path),
    headers,
    query: [...target.query],
    body,
    auth,
    sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
    protocol: `HTTP/${req.httpVersion}`,
    requestTimeEpoch: Date.now(),
  });
};

/**
 * The route's function, within its reserved concurrency: Lambda refuses an invocation beyond it
 * at once, and API Gateway answers INTEGRATION_FAILURE.
 */
const invokeRoute = async (gateway: GatewayState, route: Route, event: APIGatewayProxyEvent, res: ServerResponse, requestId: string) => {
  const fn = gateway.options.functions.get(route);
  if (fn === undefined) throw new Error(`no function for ${route.operation}`);
  const running = gateway.running.get(fn) ?? 0;
  if (fn.reservedConcurrency !== undefined && running >= fn.reservedConcurrency)
    return sendGatewayResponse(res, requestId, 'INTEGRATION_FAILURE');
  // The slot is held until the invocation ends, as Lambda holds a unit of reserved concurrency
  // until the function returns: a client that leaves (or has its whole answer) frees nothing while
  // its function still runs, e.g. gives a list's lease back. A client that starts its next list at
  // once may therefore be refused, locally as deployed (docs/operating.md#reliability).
  gateway.running.set(fn, running + 1);
  try {
    await invokeFunction(fn, route, event, res);
  } finally {
    gateway.running.set(fn, gateway.running.get(fn)! - 1);
  }
};

/** One invocation, its answer written to the client: streamed as it is written, or buffered. */
const invokeFunction = async (fn: LocalFunction<LambdaHandler>, route: Route, event: APIGatewayProxyEvent, res: ServerResponse) => {
  const { handler } = fn;
  if (route.streaming) {
    if (!isStreamingHandler(handler)) throw new Error(`${route.operation}'s handler is not a streaming handler`);
    const stream = new GatewayResponseStream(res);
    await invokeWithTimeout(fn, (context) => handler(event, stream, context));
    return;
  }
  writeProxyResult(res, await invokeWithTimeout(fn, (context) => (handler as BufferedHandler)(event, context)));
};
