/**
 * Servers a client of the Store Orders API must survive: one real HTTP server on 127.0.0.1 whose
 * first path segment names how it misbehaves (`<origin>/<kind>/v1` is a base URL, and its v2 list
 * is `<origin>/<kind>/v2/store/orders`). It records each request (method, path, headers) and
 * whether the client closed the connection before the answer ended.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

/** What a ~1 MB gzip body expands to: one JSON string of 1 GiB. */
export const bombBytes = 1024 ** 3;

export const hostileKinds = {
  /** A v2 page of ~1 MB gzip expanding to 1 GiB of one JSON string. */
  'v2-gzip-bomb': 'a v2 page of ~1 MB gzip that expands to 1 GiB of one JSON string',
  /** A v2 page whose body never ends. */
  'v2-endless': 'a v2 page whose body never ends',
  /** A v1 list whose second order never closes. */
  'v1-endless-order': 'a v1 list whose second order never closes',
  /** A v1 list of ~1 MB gzip whose second order expands to 1 GiB. */
  'v1-gzip-bomb': 'a v1 list of ~1 MB gzip whose second order expands to 1 GiB',
  /** Accepts the connection and never answers. */
  silent: 'a server that never sends its headers',
  /** Sends a 503's body one byte at a time. */
  'drip-error': 'a 503 whose body comes one byte every 200 ms',
  /** A text 500 that echoes the Authorization header, in the body and as X-Request-Id. */
  'echo-text': 'a text 500 that echoes the key (body and X-Request-Id)',
  /** An Error record whose message echoes the Authorization header. */
  'echo-record': 'an Error record whose message echoes the key',
  /** A v2 list whose every page names the same next cursor. */
  'repeated-cursor': 'a v2 list that repeats its cursor',
  /** A v2 list of 10 pages of one order each (for a cap on pages). */
  'ten-pages': 'a v2 list of ten pages',
  /** A well-behaved tiny v2 page and v1 list. */
  ok: 'a well-behaved server',
} as const;

export type HostileKind = keyof typeof hostileKinds;

export type SeenRequest = {
  kind: string;
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  closedEarly: Promise<boolean>;
};

const jsonHeaders = { 'Content-Type': 'application/json', 'X-Request-Id': 'req-hostile' };

/** The body: `head`, then `fillerBytes` of "a" (Infinity: forever), then `tail`, gzipped or not, written as the client reads it. */
const stream = (response: ServerResponse, status: number, parts: { head: string; fillerBytes: number; tail: string; gzip: boolean }) => {
  response.writeHead(status, { ...jsonHeaders, ...(parts.gzip ? { 'Content-Encoding': 'gzip' } : {}) });
  const block = Buffer.alloc(1024 * 1024, 'a');
  async function* body() {
    yield Buffer.from(parts.head);
    for (let sent = 0; sent < parts.fillerBytes; sent += block.length)
      yield block.subarray(0, Math.min(block.length, parts.fillerBytes - sent));
    yield Buffer.from(parts.tail);
  }
  const source = Readable.from(body());
  const stages = parts.gzip ? pipeline(source, createGzip(), response) : pipeline(source, response);
  stages.catch(() => source.destroy());
};

const answer = (kind: string, request: IncomingMessage, response: ServerResponse, path: string) => {
  const auth = request.headers.authorization ?? '';
  const v2 = path.startsWith('/v2/');
  switch (kind) {
    case 'v2-gzip-bomb':
      return stream(response, 200, { head: '{"orders":[{"id":1,"status":"', fillerBytes: bombBytes, tail: '"}]}', gzip: true });
    case 'v2-endless':
      return stream(response, 200, { head: '{"orders":[{"id":1,"status":"', fillerBytes: Infinity, tail: '', gzip: false });
    case 'v1-endless-order':
      return stream(response, 200, { head: '[{"id":1},{"id":2,"status":"', fillerBytes: Infinity, tail: '', gzip: false });
    case 'v1-gzip-bomb':
      return stream(response, 200, { head: '[{"id":1},{"id":2,"status":"', fillerBytes: bombBytes, tail: '"}]', gzip: true });
    case 'silent':
      return;
    case 'drip-error': {
      response.writeHead(503, jsonHeaders);
      const drip = setInterval(() => response.write(' '), 200);
      response.on('close', () => clearInterval(drip));
      return;
    }
    case 'echo-text':
      return response
        .writeHead(500, { 'Content-Type': 'text/plain', 'X-Request-Id': auth.replace(/^Bearer /, '') })
        .end(`upstream refused: Authorization: ${auth} (key=${auth.replace(/^Bearer /, '')})`);
    case 'echo-record':
      return response
        .writeHead(500, jsonHeaders)
        .end(JSON.stringify({ code: 'internal_error', message: `no such key: ${auth}`, status: 500 }));
    case 'repeated-cursor':
      return response.writeHead(200, jsonHeaders).end('{"orders":[{"id":1}],"nextCursor":"c2FtZQ"}');
    case 'ten-pages': {
      const page = Number(new URL(path, 'http://x').searchParams.get('cursor') ?? '0');
      const next = page < 9 ? `,"nextCursor":"${page + 1}"` : '';
      return response.writeHead(200, jsonHeaders).end(`{"orders":[{"id":${page}}]${next}}`);
    }
    default:
      return response.writeHead(200, jsonHeaders).end(v2 ? '{"orders":[{"id":9007199254740993}]}' : '[{"id":9007199254740993}]');
  }
};

/** The server, its origin, what it saw, and `close()`. */
export const hostileServer = async () => {
  const seen: SeenRequest[] = [];
  const server = createServer((request, response) => {
    const [, kind = '', ...rest] = request.url!.split('/');
    const path = `/${rest.join('/')}`;
    const closedEarly = once(response, 'close').then(() => !response.writableFinished);
    seen.push({ kind, method: request.method!, path, headers: request.headers, closedEarly });
    answer(kind, request, response, path);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    baseUrl: (kind: HostileKind) => `${origin}/${kind}/v1`,
    seen,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
};
