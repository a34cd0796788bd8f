import { connect } from 'node:net';

/**
 * HTTP/1.1 over a bare TCP socket: the request goes out byte for byte as given (no client
 * library normalises its method, target or headers) and the answer is read as sent.
 */
export type RawResponse = {
  /** 0 when the connection closed without an answer. */
  readonly status: number;
  /** Lower-case names; repeated fields joined with ", ". */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
  readonly raw: string;
};

/**
 * Sends `request` and reads the first answer: until it is complete (by its Content-Length or
 * chunked end; `head` for an answer to HEAD, which has no body) or the server closes. The socket
 * is not half-closed: Node's server takes a client's FIN as leaving and drops its answer.
 */
export const sendRaw = (
  port: number,
  request: string | Buffer,
  options: { head?: boolean; timeoutMs?: number } = {},
): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timeoutMs = options.timeoutMs ?? 15_000;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no end of the answer within ${timeoutMs} ms: ${Buffer.concat(chunks).toString('latin1').slice(0, 300)}`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(parseResponse(Buffer.concat(chunks)));
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (parseResponse(Buffer.concat(chunks), options.head).complete) done();
    });
    // A server may reset the connection after answering a request it could not parse whole.
    socket.on('error', () => undefined);
    socket.on('close', done);
    socket.write(request);
  });

const parseResponse = (bytes: Buffer, head = false): RawResponse & { complete: boolean } => {
  const raw = bytes.toString('latin1');
  const headEnd = raw.indexOf('\r\n\r\n');
  if (headEnd < 0) return { status: 0, headers: new Map(), body: '', raw, complete: false };
  const [statusLine = '', ...fields] = raw.slice(0, headEnd).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers = new Map<string, string>();
  for (const field of fields) {
    const colon = field.indexOf(':');
    const name = field.slice(0, colon).trim().toLowerCase();
    const value = field.slice(colon + 1).trim();
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
  }
  const rest = bytes.subarray(headEnd + 4);
  if (head || status === 204 || status === 304) return { status, headers, body: '', raw, complete: true };
  if (headers.get('transfer-encoding')?.toLowerCase() === 'chunked') {
    const { body, complete } = dechunk(rest);
    return { status, headers, body: body.toString('utf8'), raw, complete };
  }
  const length = headers.has('content-length') ? Number(headers.get('content-length')) : Infinity;
  return { status, headers, body: rest.subarray(0, length).toString('utf8'), raw, complete: rest.length >= length };
};

/** The payload of a chunked body (what arrived of it, if the connection was cut) and whether its last chunk came. */
const dechunk = (bytes: Buffer): { body: Buffer; complete: boolean } => {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) return { body: Buffer.concat(parts), complete: false };
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (size === 0) return { body: Buffer.concat(parts), complete: bytes.indexOf('\r\n\r\n', lineEnd) >= 0 };
    if (!Number.isFinite(size) || bytes.length < lineEnd + 2 + size) return { body: Buffer.concat(parts), complete: false };
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
};
