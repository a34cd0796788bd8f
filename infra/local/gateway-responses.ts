/**
 * Writing the local gateway's answers: Error records (its own and the deployed stack's gateway
 * responses), a buffered function's proxy result, and a streaming function's response stream.
 */
import type { ServerResponse } from 'node:http';
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import {
  authorizerContextHeaders,
  type ErrorCode,
  errorHeaders,
  errorRecord,
  type GatewayResponseType,
  gatewayResponseCodes,
  gatewayResponseHeaders,
} from '../../shared/errors.ts';
import { bodyPending } from './gateway-requests.ts';
import { decodeStreamed, LambdaResponseStream, type ProxyResult } from './lambda-runtime.ts';

/**
 * Aborts a connection whose answer has begun and cannot be completed: a reset (TCP RST), which
 * reaches the client at once, even one that has stopped reading. A plain close would queue its
 * FIN behind the megabytes a paused client has not taken, and its connection would stay open
 * until it read them all.
 */
const abort = (res: ServerResponse) => {
  const socket = res.socket;
  if (socket !== null && !socket.destroyed) socket.resetAndDestroy();
  else res.destroy();
};

/** An Error record of `code`; a connection whose answer has begun is aborted instead. */
export const sendError = (
  res: ServerResponse,
  requestId: string,
  code: ErrorCode,
  headers: Record<string, string> = errorHeaders(code),
  message?: string,
) => {
  if (res.headersSent) {
    abort(res);
    return;
  }
  const record = errorRecord(code, message);
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

/**
 * A gateway response of the deployed stack: the type's code and headers (shared/errors.ts), those
 * taken from the authorization's context as the deployed one maps `context.authorizer.<key>`.
 */
export const sendGatewayResponse = (
  res: ServerResponse,
  requestId: string,
  type: GatewayResponseType,
  auth?: APIGatewayAuthorizerResult,
) => {
  const fromContext = Object.entries(authorizerContextHeaders[type] ?? {}).flatMap(([name, key]) => {
    const value = auth?.context?.[key];
    return value === undefined || value === null ? [] : [[name, String(value)]];
  });
  sendError(res, requestId, gatewayResponseCodes[type], { ...gatewayResponseHeaders(type), ...Object.fromEntries(fromContext) });
};

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

const headerEntries = (headers: Record<string, unknown>): [string, string][] =>
  Object.entries(headers).flatMap(([name, value]) => (value === undefined || value === null ? [] : [[name, String(value)]]));

/** A buffered function's answer, as API Gateway's proxy integration turns it into HTTP. */
export const writeProxyResult = (res: ServerResponse, result: ProxyResult) => {
  res.writeHead(result.statusCode, [
    ...headerEntries(result.headers ?? {}),
    ...Object.entries(result.multiValueHeaders ?? {}).flatMap(([name, values]) =>
      values.map((value): [string, string] => [name, String(value)]),
    ),
  ]);
  res.end(result.body === undefined ? undefined : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8'));
};

/**
 * A streaming function's response stream, passed on to its client as API Gateway does: the
 * prelude (status and headers) becomes the HTTP head, sent as soon as it arrives; the body follows
 * as it is written.
 */
export class GatewayResponseStream extends LambdaResponseStream {
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

  /**
   * A stream the function ends with an error (a list cut mid-stream) aborts its client's
   * connection, as API Gateway does: the client sees the answer fail at once, paused or not, and
   * the socket is not left open without an end.
   */
  override _destroy(error: Error | null, callback: (error?: Error | null) => void) {
    if (error !== null && !this.res.writableFinished) abort(this.res);
    callback(error);
  }

  protected deliver(bytes: Buffer, done: (error?: Error | null) => void) {
    const body = this.res.headersSent ? bytes : this.sendHead(bytes);
    if (body.length === 0) done();
    else this.res.write(body, done);
  }

  protected finish(done: (error?: Error | null) => void) {
    this.res.end(done);
  }

  /** The head from the prelude in front of the first bytes (a plain 200 without one); what follows it. */
  private sendHead(first: Buffer): Buffer {
    const { prelude, body } = decodeStreamed(this.contentType, first);
    const { statusCode, headers } = (prelude ?? {}) as { statusCode?: number; headers?: Record<string, unknown> };
    const head = prelude === undefined && this.contentType !== undefined ? { 'Content-Type': this.contentType } : (headers ?? {});
    this.res.writeHead(statusCode ?? 200, headerEntries(head));
    this.res.flushHeaders();
    return body;
  }
}
