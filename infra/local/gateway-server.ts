/**
 * The local gateway's HTTP server: API Gateway's bound on the request head, the client bounds,
 * and Error records for what Node's HTTP parser refuses before a request exists.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type ErrorCode, errorHeaders, errorRecord } from '../../shared/errors.ts';
import { type ConnectionShares, connectionShares } from './gateway-shares.ts';

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
 * record (docs/developing.md#small-decisions): a well-formed request with a method no operation
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
 * What one client may hold of the local gateway (docs/operating.md#reliability; docs/developing.md#small-decisions).
 * API Gateway documents none of these for REST APIs; its documented bounds (10240 bytes of request
 * line and headers, 10 MB of body, 29 s of integration) set their scale: a request must be whole
 * within the 30 s a cancel could take at most, its head within 3 s (an honest client sends it at once).
 */
export type ClientBounds = {
  /**
   * From the connection (or the end of the previous answer) to the end of the request's headers:
   * short, since an honest client sends its head (at most 10240 bytes) at once.
   */
  readonly headersTimeoutMs: number;
  /** From the connection (or the end of the previous answer) to the end of the request's body. */
  readonly requestTimeoutMs: number;
  /** A keep-alive connection with no request under way is closed after this long. */
  readonly idleTimeoutMs: number;
  /**
   * Connections open at once; one more closes a connection waiting for a head of the address
   * holding the most, else a request of an address holding more than the newcomer's, else the
   * newcomer (./gateway-shares.ts).
   */
  readonly maxConnections: number;
  /** Requests of one key under way at once; one more is answered 429 at once (./gateway-shares.ts). */
  readonly maxRequestsPerKey: number;
  /**
   * A body must arrive at this rate or faster once `bodyGraceMs` have passed (Apache's
   * mod_reqtimeout model): by then it must have `(elapsed - grace) × rate` bytes; a slower one is
   * answered 400 and its connection ended, long before the request timeout.
   */
  readonly minBodyBytesPerSecond: number;
  readonly bodyGraceMs: number;
};

export const clientBounds: ClientBounds = {
  headersTimeoutMs: 3_000,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 5_000,
  maxConnections: 256,
  maxRequestsPerKey: 64,
  minBodyBytesPerSecond: 1_000,
  bodyGraceMs: 2_000,
};

/** The HTTP server in front of the gateway (./gateway.ts), calling `onRequest` for each request it accepts, and the shares of its connections. */
export const createGatewayServer = (
  handleRequest: (req: IncomingMessage, res: ServerResponse) => void,
  bounds: ClientBounds,
): { server: Server; shares: ConnectionShares } => {
  const server = createServer({
    // API Gateway's quota on the request line and headers together (10240 bytes).
    maxHeaderSize: maxRequestHeadBytes,
    // Checked by the gateway (./gateway.ts), so that the answer is an Error record.
    requireHostHeader: false,
    headersTimeout: bounds.headersTimeoutMs,
    requestTimeout: bounds.requestTimeoutMs,
    keepAliveTimeout: bounds.idleTimeoutMs,
    // How often Node checks the two timeouts above (default 30 s, which would triple a short one).
    connectionsCheckingInterval: Math.min(1_000, bounds.headersTimeoutMs),
  });
  const shares = connectionShares(server, bounds);
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    shares.requestStarted(req, res);
    handleRequest(req, res);
  };
  server.on('request', onRequest);
  // `100 Continue` is sent by the gateway once the key is accepted, not by Node on arrival.
  server.on('checkContinue', onRequest);
  // `Expect` other than 100-continue: Node would answer a bare 417; RFC 9110 §10.1.1 lets a server ignore it.
  server.on('checkExpectation', onRequest);
  // What Node's HTTP parser refuses before a request exists, and CONNECT, get Error records too.
  server.on('clientError', answerClientError);
  server.on('connect', (_req: IncomingMessage, socket: Socket) => socket.end(rawErrorResponse('route_not_found')));
  return { server, shares };
};
