import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { MiddlewareObj, Request } from '@middy/core';
import httpErrorHandler from '@middy/http-error-handler';
import type { APIGatewayProxyEvent, Context, StreamifyHandler } from 'aws-lambda';
import { finished, Readable } from 'node:stream';
import { dynamoDbFields, publishDynamoDbMetrics, startDynamoDbRecord } from './dynamo-calls.ts';
import { errorRecord, isApiError } from './errors.ts';
import { logger, metricNames, metricsMiddleware, recordAnswer, recordForVersion } from './observability.ts';
import { deprecationHeaders, type Route } from './routes.ts';
import { hookRequestIdPrefix } from './probes.ts';

/** A header's value whatever its case (API Gateway keeps the client's spelling). */
export const header = (headers: APIGatewayProxyEvent['headers'] | null | undefined, name: string): string | undefined => {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers ?? {})) if (key.toLowerCase() === wanted) return value ?? undefined;
  return undefined;
};

/** True when the client accepts gzip (RFC 9110 Accept-Encoding, `q=0` meaning "not"). */
export const acceptsGzip = (acceptEncoding: string | undefined): boolean =>
  (acceptEncoding ?? '').split(',').some((entry) => {
    const [coding, ...params] = entry.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0);
  });

type HttpResponse = { statusCode: number; headers?: Record<string, string | number | boolean>; body?: unknown };

const isStream = (body: unknown): body is Readable => body instanceof Readable;

/**
 * Errors a streamed body raised itself: a cut (its client too slow) or a failed read. Any other
 * error that ends a streamed answer before its end came from the response stream: its client left.
 */
const raisedByBody = new WeakSet<object>();

/** Marks `error` as the body's own failure (the answer is cut, and the invocation fails); returns it. */
export const bodyFailure = <E>(error: E): E => {
  if (typeof error === 'object' && error !== null) raisedByBody.add(error);
  return error;
};

const isBodyFailure = (error: unknown) => typeof error === 'object' && error !== null && raisedByBody.has(error);

/** Each invocation's operation and start (`Date.now()`), and those whose client's leaving was already reported. */
const invocations = new WeakMap<Context, { readonly operation: string; readonly at: number }>();
const reportedLeft = new WeakSet<Context>();
/** The answer each invocation gave (its status and outcome), for the line of a client that left before its end. */
const answered = new WeakMap<Context, { statusCode: number; outcome: string; latencyMs: number }>();

/**
 * A streamed answer whose client left before its end: the client's outcome, not the function's
 * (a web server's "client closed request"). One info line and one ListsLeftEarly, once per
 * invocation, whichever part of the invocation sees it first. The metric is per version and dated
 * at the invocation's start, as Lambda dates an Errors datapoint (StalledListsCut likewise): the
 * list's guard subtracts it from its version's Errors, whether Lambda counts such an invocation
 * there or not (infra/cdk/monitoring/guards.ts).
 */
const reportLeft = (context: Context, entry: Record<string, unknown>) => {
  if (reportedLeft.has(context)) return;
  reportedLeft.add(context);
  const invocation = invocations.get(context);
  if (invocation !== undefined) recordForVersion(invocation.operation, { [metricNames.listsLeftEarly]: 1 }, invocation.at);
  logger.info('list left by its client', { ...entry, outcome: 'left_by_client', ...dynamoDbFields() });
  publishDynamoDbMetrics();
  // Each call is in one completion line: a later line of the same request (none is expected) starts empty.
  startDynamoDbRecord();
};

/** A documented refusal: 429, or 503 with Retry-After (docs/api.md), which a client waits out and asks again. */
export const isBusyAnswer = ({ statusCode, headers }: HttpResponse): boolean =>
  statusCode === 429 || (statusCode === 503 && Object.keys(headers ?? {}).some((name) => name.toLowerCase() === 'retry-after'));

/**
 * Request id, standard headers and one access-log line for every answer, the error
 * responses included. Used before httpErrorHandler so that its onError runs after the
 * error has become a response (middy runs onError hooks in reverse order).
 *
 * The request's log keys are replaced when a request starts, not removed when the handler
 * returns: a streamed body is still being written after that, and its lines must carry them.
 * A streamed answer is logged when its body has ended (or failed), with its time to first byte.
 * The line carries the DynamoDB calls the request made (shared/dynamo-calls.ts), whose
 * per-operation metrics are published with it.
 */
const requestEnvelope = (route: Route): MiddlewareObj<APIGatewayProxyEvent, HttpResponse> => {
  const { operation } = route;
  const fixedHeaders = { 'Cache-Control': 'no-store', ...deprecationHeaders(route) };
  const startedAt = new WeakMap<object, number>();

  const before = (request: Request<APIGatewayProxyEvent, HttpResponse>) => {
    startedAt.set(request, performance.now());
    invocations.set(request.context, { operation, at: Date.now() });
    logger.resetKeys();
    logger.appendKeys({ request_id: request.event.requestContext?.requestId, operation });
    startDynamoDbRecord();
  };
  const complete = (level: 'info' | 'error', message: string, entry: Record<string, unknown>) => {
    logger[level](message, { ...entry, ...dynamoDbFields() });
    publishDynamoDbMetrics();
    startDynamoDbRecord();
  };
  const finish = (request: Request<APIGatewayProxyEvent, HttpResponse>) => {
    const response = request.response;
    if (response == null) return;
    response.headers = { ...response.headers, ...fixedHeaders, 'X-Request-Id': request.event.requestContext?.requestId ?? '' };
    const started = startedAt.get(request) ?? performance.now();
    const elapsedMs = () => Math.round(performance.now() - started);
    const error = request.error;
    const code = isApiError(error) ? error.code : error == null ? undefined : 'internal_error';
    const entry = { statusCode: response.statusCode, outcome: code ?? 'ok', latencyMs: elapsedMs() };
    answered.set(request.context, entry);
    // For this version's guard alarms: a 500 is its own failure; a 4xx but 429 is the client's refused
    // request; a 429, or a 503 with Retry-After, its own documented refusal (judged as a share: BusyShare).
    const refused = response.statusCode >= 400 && response.statusCode < 500 && response.statusCode !== 429;
    const busy = isBusyAnswer(response);
    // The pre-traffic hook's own calls (its retries, its cold starts) are the hook's to judge: counted
    // in a guard, several hooks retrying a busy new version would roll a good release back.
    if (!request.event.requestContext?.requestId?.startsWith(hookRequestIdPrefix))
      recordAnswer(operation, { fault: code === 'internal_error', refused, busy, latencyMs: entry.latencyMs });
    if (isStream(response.body)) {
      const firstByteMs = entry.latencyMs;
      finished(response.body, (streamError) => {
        if (!streamError) complete('info', 'request completed', { ...entry, latencyMs: elapsedMs(), firstByteMs });
        // The status line is gone already: the client sees a cut connection, on-call sees this.
        else if (isBodyFailure(streamError))
          complete('error', 'response cut short', {
            ...entry,
            outcome: 'truncated',
            latencyMs: elapsedMs(),
            firstByteMs,
            error: streamError,
          });
        else reportLeft(request.context, { ...entry, latencyMs: elapsedMs(), firstByteMs, error: streamError });
      });
    } else if (response.statusCode >= 500) complete('error', 'request failed', { ...entry, error });
    else complete('info', 'request completed', entry);
  };
  return { before, after: finish, onError: finish };
};

/**
 * A streamed route's handler (middy's, in streaming mode) whose client may leave: when the response
 * stream was closed before the answer's end by anything but the body's own failure (bodyFailure),
 * the invocation resolves instead of failing, and the line `list left by its client` and
 * ListsLeftEarly say so (once; the request envelope may have said it already, at the body's end).
 * The body's own failures (a cut, a failed read) still fail the invocation: their client must see
 * a broken stream, which on Lambda only a failed invocation gives (docs/decisions.md).
 */
export const resolvedWhenClientLeaves = <Event>(inner: StreamifyHandler<Event, void>): StreamifyHandler<Event, void> =>
  awslambda.streamifyResponse(async (event: Event, stream: awslambda.HttpResponseStream, context: Context) => {
    try {
      await inner(event, stream, context);
    } catch (error) {
      if (!stream.destroyed || isBodyFailure(error)) throw error;
      reportLeft(context, { ...answered.get(context), error });
    }
  });

/**
 * A streamed route's string bodies (its Error records) become streams, so that middy pipes every
 * answer into the response stream. middy writes a string with write() and then waits for
 * end()'s callback, which never comes on a response stream already destroyed (its client gone):
 * Lambda's is an http.ClientRequest (the runtime interface client's src/stream/response-stream.ts),
 * whose end() callback waits for a 'finish' a destroyed request never emits, and the invocation
 * would last until the function's timeout. A pipeline into a destroyed stream fails at once.
 * Used first, so that it runs last: the request envelope still sees (and logs) the Error record.
 */
const streamedErrorBodies: MiddlewareObj<APIGatewayProxyEvent, HttpResponse> = (() => {
  const toStream = (request: Request<APIGatewayProxyEvent, HttpResponse>) => {
    const response = request.response;
    if (response != null && typeof response.body === 'string') response.body = Readable.from([response.body]);
  };
  return { after: toStream, onError: toStream };
})();

/**
 * The middleware every HTTP function uses, in order: (a streamed route's Error records as
 * streams,) Lambda context in logs, EMF metrics, the request envelope, and error records. The
 * handler after them is only the business step.
 */
export const httpMiddleware = (route: Route) => [
  ...(route.streaming ? [streamedErrorBodies] : []),
  // Never the event, whatever POWERTOOLS_LOGGER_LOG_EVENT says: its headers carry the API key.
  injectLambdaContext(logger, { logEvent: false }),
  metricsMiddleware(),
  requestEnvelope(route),
  httpErrorHandler({ logger: false, fallbackMessage: JSON.stringify(errorRecord('internal_error')) }),
];
