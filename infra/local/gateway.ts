/**
 * A local stand-in for the deployed API Gateway REST API: HTTP request → REST proxy event →
 * TOKEN authorizer → the very same handler module Lambda runs → HTTP response. It mirrors
 * the gateway's own behaviour (routing, 401 before the authorizer, policy caching, gateway
 * error responses as Error records) and holds no business logic.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Writable } from 'node:stream';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { authorizationHeaderPattern } from '../../shared/api-keys.ts';
import {
  type ErrorCode,
  errorHeaders,
  errorRecord,
  type GatewayResponseType,
  gatewayResponseCodes,
  gatewayResponseHeaders,
} from '../../shared/errors.ts';
import { basePath, type Route } from '../../shared/routes.ts';
import { createAuthorizerCache, policyAllows } from './authorizer-cache.ts';
import type { RateLimiter } from './rate-limits.ts';

type ProxyResult = {
  statusCode: number;
  headers?: Record<string, unknown>;
  multiValueHeaders?: Record<string, unknown[]>;
  body?: string;
  isBase64Encoded?: boolean;
};
type StreamingHandler = ((event: unknown, stream: Writable, context: Context) => Promise<void>) & { [streaming]?: true };
type BufferedHandler = (event: unknown, context: Context) => Promise<ProxyResult>;
export type LambdaHandler = StreamingHandler | BufferedHandler;
export type Authorizer = (event: APIGatewayTokenAuthorizerEvent, context: Context) => Promise<APIGatewayAuthorizerResult>;

const streaming = Symbol('lambda response streaming');

/** A response stream with the metadata Lambda's HttpResponseStream carries (status and headers). */
class LocalResponseStream extends Writable {
  metadata: { statusCode?: number; headers?: Record<string, unknown> } = {};
  contentType: string | undefined;
  private readonly res: ServerResponse;
  constructor(res: ServerResponse) {
    super();
    this.res = res;
    // A client gone before the end (even before the function began): the function's writes fail (a
    // pipeline into this stream ends with a premature close) instead of waiting for it forever.
    // No error event: nothing may listen yet.
    const gone = () => {
      if (!res.writableFinished) this.destroy();
    };
    if (res.closed) queueMicrotask(gone);
    else res.once('close', gone);
  }
  setContentType(contentType: string) {
    this.contentType = contentType;
  }
  /** Lambda sends the status and headers as soon as HttpResponseStream.from() is called. */
  sendHead() {
    if (this.res.headersSent) return;
    const headers = { ...(this.contentType ? { 'Content-Type': this.contentType } : {}), ...this.metadata.headers };
    this.res.writeHead(this.metadata.statusCode ?? 200, headerEntries(headers));
    this.res.flushHeaders();
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void) {
    this.sendHead();
    if (chunk.length === 0) callback();
    else this.res.write(chunk, callback);
  }
  override _final(callback: (error?: Error | null) => void) {
    this.sendHead();
    this.res.end(callback);
  }
}

/**
 * The globals the Lambda Node.js runtime provides for response streaming, which middy's
 * streaming mode calls when a handler module is loaded: install before importing handlers.
 */
export const installLambdaStreamingGlobals = () => {
  // Other libraries (the SDK's invoke store) may already have created `awslambda`: add to it.
  const global = globalThis as { awslambda?: Record<string, unknown> };
  global.awslambda ??= {};
  const lambda = global.awslambda;
  lambda.streamifyResponse ??= (handler: StreamingHandler) => Object.assign(handler, { [streaming]: true });
  lambda.HttpResponseStream ??= {
    from: (stream: LocalResponseStream, metadata: LocalResponseStream['metadata']) => Object.assign(stream, { metadata }),
  };
};

const headerEntries = (headers: Record<string, unknown>): [string, string][] =>
  Object.entries(headers).flatMap(([name, value]) => (value === undefined || value === null ? [] : [[name, String(value)]]));

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

/** A function as the local gateway runs it: its handler and the settings Lambda gives it (infra/function-settings.ts). */
export type LocalFunction<Handler> = {
  readonly name: string;
  readonly handler: Handler;
  readonly memorySize: number;
  readonly timeoutSeconds: number;
  /** Lambda's reserved concurrency: an invocation beyond it is throttled (API Gateway: INTEGRATION_FAILURE). */
  readonly reservedConcurrency?: number;
};

const lambdaContext = (fn: LocalFunction<unknown>, deadline: number): Context => ({
  awsRequestId: randomUUID(),
  callbackWaitsForEmptyEventLoop: true,
  functionName: fn.name,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${fn.name}`,
  memoryLimitInMB: String(fn.memorySize),
  logGroupName: `/aws/lambda/${fn.name}`,
  logStreamName: 'local',
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
});

/**
 * Runs one invocation as Lambda would: with a context whose remaining time counts down from the
 * function's timeout, failing with Lambda's "Task timed out" error when it runs out (the
 * handler itself cannot be stopped here, as Lambda would stop it; its answer is then ignored).
 */
const invoke = async <Handler, Result>(fn: LocalFunction<Handler>, call: (handler: Handler, context: Context) => Promise<Result>) => {
  const timeoutMs = fn.timeoutSeconds * 1000;
  const context = lambdaContext(fn, Date.now() + timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds`)), timeoutMs);
  });
  try {
    return await Promise.race([call(fn.handler, context), timedOut]);
  } finally {
    clearTimeout(timer);
  }
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
  /** Extra GET documents served without a key (e.g. `/v1/openapi.json`), path → JSON text. */
  readonly documents?: Readonly<Record<string, () => string>>;
  /** Tests shorten these; `npm start` runs with `clientBounds`. */
  readonly clientBounds?: Partial<ClientBounds>;
};

/**
 * What one client may hold of the local gateway (docs/operating.md#reliability; docs/decisions.md, "Issue 20").
 * API Gateway documents none of these for REST APIs; its documented bounds (10240 bytes of request
 * line and headers, 10 MB of body, 29 s of integration) set their scale: a request must be whole
 * within the 30 s a cancel could take at most, its head within 10 s.
 */
export type ClientBounds = {
  /** From the connection (or the end of the previous answer) to the end of the request's headers. */
  readonly headersTimeoutMs: number;
  /** From the connection (or the end of the previous answer) to the end of the request's body. */
  readonly requestTimeoutMs: number;
  /** A keep-alive connection with no request under way is closed after this long. */
  readonly idleTimeoutMs: number;
  /** Connections open at once; further ones are closed as soon as they are accepted. */
  readonly maxConnections: number;
};

export const clientBounds: ClientBounds = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 5_000,
  maxConnections: 256,
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

export const startGateway = async (options: GatewayOptions): Promise<Gateway> => {
  const stage = options.stage ?? 'local';
  const authorizerCache = createAuthorizerCache({ ttlSeconds: options.authorizerCacheTtlSeconds });

  const sendError = (res: ServerResponse, requestId: string, code: ErrorCode, headers: Record<string, string> = errorHeaders(code)) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const record = errorRecord(code);
    // A body this gateway did not read is not waited for: the connection ends with the answer.
    if (bodyPending(res.req)) closeAfterAnswer(res);
    res.writeHead(record.status, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      'X-Request-Id': requestId,
      ...headers,
    });
    res.end(JSON.stringify(record));
  };
  /** A gateway response of the deployed stack: the type's code and headers (shared/errors.ts). */
  const sendGatewayResponse = (res: ServerResponse, requestId: string, type: GatewayResponseType) =>
    sendError(res, requestId, gatewayResponseCodes[type], gatewayResponseHeaders(type));

  /**
   * API Gateway's usage plan check, after the authorizer: no usage identifier is INVALID_API_KEY,
   * a key over its tier's limits THROTTLED or QUOTA_EXCEEDED. Undefined when the request may go on.
   */
  const limitRefusal = (auth: APIGatewayAuthorizerResult, route: Route): GatewayResponseType | undefined => {
    if (options.rateLimiter === undefined) return undefined;
    const usageKey = auth.usageIdentifierKey;
    if (typeof usageKey !== 'string' || usageKey === '') return 'INVALID_API_KEY';
    const tier = auth.context?.tier;
    return options.rateLimiter.admit(usageKey, typeof tier === 'string' ? tier : undefined, route);
  };

  /**
   * API Gateway semantics: `Unauthorized` → 401, any other failure → 500, Deny → 403 (sent as 401
   * here, as deployed). The result is cached by the identity source's value, and its policy is
   * evaluated against this request's method ARN whether it came from the cache or not.
   */
  const authorize = async (token: string, methodArn: string): Promise<APIGatewayAuthorizerResult | ErrorCode> => {
    let result = authorizerCache.get(token);
    if (result === undefined) {
      try {
        const event: APIGatewayTokenAuthorizerEvent = { type: 'TOKEN', authorizationToken: token, methodArn };
        result = await invoke(options.authorizer, (authorizer, context) => authorizer(event, context));
      } catch (error) {
        return error instanceof Error && error.message === 'Unauthorized' ? 'unauthorized' : 'internal_error';
      }
      authorizerCache.set(token, result);
    }
    return policyAllows(result, methodArn) ? result : 'unauthorized';
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const requestId = randomUUID();
    const url = requestUrl(req);
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is answered 400.
    if (url === undefined || (req.httpVersion === '1.1' && req.headers.host === undefined)) return sendError(res, requestId, 'bad_request');
    const method = req.method ?? 'GET';
    // Own properties only: a client's path must not reach Object.prototype.
    const document = Object.hasOwn(options.documents ?? {}, url.pathname) ? options.documents?.[url.pathname] : undefined;
    if (document !== undefined && method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache', 'X-Request-Id': requestId });
      res.end(document());
      return;
    }

    // Unknown path or method: API Gateway's 403 "Missing Authentication Token", rewritten to 404.
    let match: { route: Route; pathParameters: Record<string, string> } | undefined;
    if (url.pathname.startsWith(`${basePath}/`)) {
      const path = url.pathname.slice(basePath.length);
      for (const route of options.routes) {
        const pathParameters = route.method === method ? matchPath(route.path, path) : undefined;
        if (pathParameters !== undefined) match = { route, pathParameters };
      }
    }
    if (match === undefined) return sendError(res, requestId, 'route_not_found');
    const { route, pathParameters } = match;
    if (declaredBodyBytes(req) > maxBodyBytes) return sendError(res, requestId, 'bad_request');

    // Who sends the request is settled before any of its body is read: a client without an
    // accepted key gets its answer, and no `100 Continue`, however much it means to send.
    // The gateway checks the identity source against its validation pattern before the authorizer runs.
    const authorization = req.headers.authorization;
    if (authorization === undefined || !authorizationHeaderPattern.test(authorization)) return sendError(res, requestId, 'unauthorized');
    const methodArn = `arn:aws:execute-api:local:000000000000:local-api/${stage}/${method}${route.path}`;
    const auth = await authorize(authorization, methodArn);
    if (typeof auth === 'string') return sendError(res, requestId, auth);
    const refusal = limitRefusal(auth, route);
    if (refusal !== undefined) return sendGatewayResponse(res, requestId, refusal);
    if (/^100-continue$/i.test(req.headers.expect ?? '')) res.writeContinue();
    const body = await readBody(req);
    if (body === undefined) return sendError(res, requestId, 'bad_request');

    const event = proxyEvent({ req, url, route, pathParameters, requestId, stage, body, auth });
    const fn = options.functions.get(route);
    if (fn === undefined) throw new Error(`no function for ${route.operation}`);
    // Lambda refuses an invocation beyond the function's reserved concurrency at once; API Gateway answers it.
    const running = runningInvocations.get(fn) ?? 0;
    if (fn.reservedConcurrency !== undefined && running >= fn.reservedConcurrency)
      return sendGatewayResponse(res, requestId, 'INTEGRATION_FAILURE');
    runningInvocations.set(fn, running + 1);
    // The slot is free once the answer is complete (its function has nothing left to do but return)
    // or the invocation has ended, whichever comes first: a client's next request never races it.
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      runningInvocations.set(fn, runningInvocations.get(fn)! - 1);
    };
    res.once('finish', release);
    try {
      await invokeRoute(fn, route, event, res);
    } finally {
      release();
    }
  };

  const runningInvocations = new Map<LocalFunction<LambdaHandler>, number>();
  const invokeRoute = async (fn: LocalFunction<LambdaHandler>, route: Route, event: APIGatewayProxyEvent, res: ServerResponse) => {
    if (route.streaming) {
      if ((fn.handler as StreamingHandler)[streaming] !== true) throw new Error(`${route.handlerFile} is not a streaming handler`);
      const stream = new LocalResponseStream(res);
      await invoke(fn, (handler, context) => (handler as StreamingHandler)(event, stream, context));
      return;
    }
    const result = await invoke(fn, (handler, context) => (handler as BufferedHandler)(event, context));
    res.writeHead(result.statusCode, [
      ...headerEntries(result.headers ?? {}),
      ...Object.entries(result.multiValueHeaders ?? {}).flatMap(([name, values]) =>
        values.map((value): [string, string] => [name, String(value)]),
      ),
    ]);
    res.end(result.body === undefined ? undefined : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8'));
  };

  let draining = false;
  /** Invocations under way, whether or not their client is still connected (Lambda would finish them too). */
  const inFlight = new Set<Promise<void>>();
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    // While draining, a keep-alive connection is closed as soon as its answer is complete.
    res.on('close', () => {
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
    const work = handle(req, res).catch((error: unknown) => {
      // The client left (its connection closed): nobody to answer, nothing failed here.
      if (res.destroyed && !res.writableFinished && req.socket.destroyed) return;
      // A handler that throws is a Lambda function error: the gateway answers 500 (DEFAULT_5XX).
      console.error(JSON.stringify({ level: 'ERROR', message: 'local gateway: handler failed', error: String(error) }));
      sendError(res, randomUUID(), 'internal_error');
    });
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };
  const server = createGatewayServer(onRequest, { ...clientBounds, ...options.clientBounds });
  server.listen(options.port, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}${basePath}`,
    port,
    server,
    close: async ({ drainMs = 0 } = {}) => {
      draining = true;
      const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
      server.closeIdleConnections();
      const drained = (async () => {
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      })();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, drainMs)))]);
      clearTimeout(timer);
      // What still runs now (a list still streaming) is cut.
      server.closeAllConnections();
      await closed;
    },
  };
};

/** The request target as a URL (origin-form or absolute-form), undefined when it is none. */
const requestUrl = (req: IncomingMessage): URL | undefined => {
  try {
    return new URL(req.url ?? '/', 'http://localhost');
  } catch {
    return undefined;
  }
};

const maxRequestHeadBytes = 10_240;

/** A whole HTTP/1.1 answer carrying an Error record, for a socket that has no ServerResponse (yet). */
const rawErrorResponse = (code: ErrorCode, message?: string): string => {
  const record = errorRecord(code, message);
  const body = JSON.stringify(record);
  const headers = {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Request-Id': randomUUID(),
    // The parser's state is lost after a refused request: nothing more is read on this connection.
    Connection: 'close',
    ...errorHeaders(code),
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${record.status} ${STATUS_CODES[record.status]}\r\n${head.join('')}\r\n${body}`;
};

/** An HTTP/1.x request line whose method is a syntactically valid token (RFC 9110 §9.1), whatever the method. */
const requestLinePattern = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [\x21-\x7e]+ HTTP\/1\.[01]\r?$/;

/**
 * Answers what Node's HTTP parser refused (`clientError`), as API Gateway would with an Error
 * record (docs/decisions.md, "Malformed HTTP"): a well-formed request with a method no operation
 * has (`FOO`, lower-case `delete`) → 404 route_not_found; anything else that is not HTTP/1.1
 * (a non-ASCII target, a bad header, more than 10240 bytes of request line and headers) → 400
 * bad_request. A socket already gone, or one whose answer has begun, is only closed.
 */
const answerClientError = (error: Error & { code?: string; rawPacket?: Buffer; bytesParsed?: number }, socket: Socket) => {
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === 'ECONNRESET' || error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const raw = error.rawPacket?.toString('latin1') ?? '';
  // The refused request begins after the last complete request before the point of failure.
  const previousEnd = raw.lastIndexOf('\r\n\r\n', error.bytesParsed ?? raw.length);
  const requestLine = raw.slice(previousEnd < 0 ? 0 : previousEnd + 4).split('\n')[0] ?? '';
  const answer =
    error.code === 'HPE_INVALID_METHOD' && requestLinePattern.test(requestLine)
      ? rawErrorResponse('route_not_found')
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? rawErrorResponse('bad_request', `The request line and headers exceed ${maxRequestHeadBytes} bytes.`)
        : rawErrorResponse('bad_request');
  socket.end(answer);
};

/**
 * The HTTP server in front of handle(): API Gateway's bound on the request head, the client
 * bounds, and Error records for what Node's parser refuses.
 */
const createGatewayServer = (onRequest: (req: IncomingMessage, res: ServerResponse) => void, bounds: ClientBounds): Server => {
  const server = createServer(
    {
      // API Gateway's quota on the request line and headers together (10240 bytes).
      maxHeaderSize: maxRequestHeadBytes,
      // Checked in handle(), so that the answer is an Error record.
      requireHostHeader: false,
      headersTimeout: bounds.headersTimeoutMs,
      requestTimeout: bounds.requestTimeoutMs,
      keepAliveTimeout: bounds.idleTimeoutMs,
      // How often Node checks the two timeouts above (default 30 s, which would triple a short one).
      connectionsCheckingInterval: Math.min(1_000, bounds.headersTimeoutMs),
    },
    onRequest,
  );
  server.maxConnections = bounds.maxConnections;
  // `100 Continue` is sent by handle() once the key is accepted, not by Node on arrival.
  server.on('checkContinue', onRequest);
  // `Expect` other than 100-continue: Node would answer a bare 417; RFC 9110 §10.1.1 lets a server ignore it.
  server.on('checkExpectation', onRequest);
  // What Node's HTTP parser refuses before a request exists, and CONNECT, get Error records too.
  server.on('clientError', answerClientError);
  server.on('connect', (_req: IncomingMessage, socket: Socket) => socket.end(rawErrorResponse('route_not_found')));
  return server;
};

const maxBodyBytes = 10 * 1024 * 1024; // API Gateway's payload limit

/** The body size the request announces (Content-Length), 0 without one (none, or chunked). */
const declaredBodyBytes = (req: IncomingMessage) => Number(req.headers['content-length'] ?? 0) || 0;

/** How long a connection ended after a refusal stays open for its client to read the answer. */
const lingerMs = 2_000;

/**
 * Ends the connection once the answer is sent, in stages (RFC 9112 §9.6): closing at once on a
 * client still sending would reset the connection, and the client could lose the answer. The
 * answer is followed by a FIN, and nothing more is read: the client has `lingerMs` to read the
 * answer before the connection is closed (a reset, if it is still sending).
 */
const closeAfterAnswer = (res: ServerResponse) => {
  const socket = res.req.socket;
  res.once('finish', () => {
    socket.end();
    socket.pause();
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    socket.once('close', () => clearTimeout(timer));
  });
};

/** Whether part of a request body may still be on its way (announced and not yet all read). */
const bodyPending = (req: IncomingMessage) =>
  !req.complete && (declaredBodyBytes(req) > 0 || req.headers['transfer-encoding'] !== undefined);

/** The body as text, null when empty, undefined when over API Gateway's limit (its 413, a DEFAULT_4XX). */
const readBody = async (req: IncomingMessage): Promise<string | null | undefined> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBodyBytes) return undefined;
    chunks.push(chunk);
  }
  return size === 0 ? null : Buffer.concat(chunks).toString('utf8');
};

/**
 * Name → last value and name → every value, as the REST proxy event carries headers and query
 * parameters. Built through Maps: names come from the client, and assigning `__proto__` or
 * reading `constructor` on a plain object reaches Object.prototype (a 500 before this).
 */
const byName = (pairs: readonly [string, string][]) => {
  const multi = new Map<string, string[]>();
  for (const [name, value] of pairs) multi.set(name, [...(multi.get(name) ?? []), value]);
  return {
    single: Object.fromEntries([...multi].map(([name, values]) => [name, values.at(-1)!])) as Record<string, string>,
    multi: Object.fromEntries(multi) as Record<string, string[]>,
  };
};

const proxyEvent = (input: {
  req: IncomingMessage;
  url: URL;
  route: Route;
  pathParameters: Record<string, string>;
  requestId: string;
  stage: string;
  body: string | null;
  auth: APIGatewayAuthorizerResult;
}): APIGatewayProxyEvent => {
  const { req, url, route, requestId, stage, auth } = input;
  const headerPairs: [string, string][] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) headerPairs.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
  const { single: headers, multi: multiValueHeaders } = byName(headerPairs);
  const { single: query, multi: multiQuery } = byName([...url.searchParams]);
  const hasQuery = Object.keys(query).length > 0;
  const resource = `${basePath}${route.path}`;
  return {
    resource,
    path: url.pathname,
    httpMethod: route.method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: Object.keys(input.pathParameters).length > 0 ? input.pathParameters : null,
    stageVariables: null,
    body: input.body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local-api',
      authorizer: { principalId: auth.principalId, ...auth.context },
      protocol: `HTTP/${req.httpVersion}`,
      httpMethod: route.method,
      path: `/${stage}${url.pathname}`,
      stage,
      requestId,
      extendedRequestId: requestId,
      requestTimeEpoch: Date.now(),
      resourceId: route.operation,
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
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        user: null,
        userAgent: req.headers['user-agent'] ?? null,
        userArn: null,
      },
    },
  };
};
