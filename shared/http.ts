import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { MiddlewareObj, Request } from '@middy/core';
import httpErrorHandler from '@middy/http-error-handler';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { finished, Readable } from 'node:stream';
import { dynamoDbFields, publishDynamoDbMetrics, startDynamoDbRecord } from './dynamo-calls.ts';
import { errorRecord, isApiError } from './errors.ts';
import { logger, metricsMiddleware, recordAnswer } from './observability.ts';
import { deprecationHeaders, type Route } from './routes.ts';

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
    logger.resetKeys();
    logger.appendKeys({ request_id: request.event.requestContext?.requestId, operation });
    startDynamoDbRecord();
  };
  const complete = (level: 'info' | 'error', message: string, entry: Record<string, unknown>) => {
    logger[level](message, { ...entry, ...dynamoDbFields() });
    publishDynamoDbMetrics();
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
    // For this version's guard alarms: a 500 is its own failure; a 4xx but 429 is the client's refused request.
    const refused = response.statusCode >= 400 && response.statusCode < 500 && response.statusCode !== 429;
    recordAnswer(operation, { fault: code === 'internal_error', refused, latencyMs: entry.latencyMs });
    if (isStream(response.body)) {
      const firstByteMs = entry.latencyMs;
      finished(response.body, (streamError) => {
        if (!streamError) complete('info', 'request completed', { ...entry, latencyMs: elapsedMs(), firstByteMs });
        // The status line is gone already: the client sees a cut connection, on-call sees this.
        else
          complete('error', 'response cut short', {
            ...entry,
            outcome: 'truncated',
            latencyMs: elapsedMs(),
            firstByteMs,
            error: streamError,
          });
      });
    } else if (response.statusCode >= 500) complete('error', 'request failed', { ...entry, error });
    else complete('info', 'request completed', entry);
  };
  return { before, after: finish, onError: finish };
};

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
