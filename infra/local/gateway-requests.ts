/** Reading a request as API Gateway does: its target, its body within API Gateway's payload limit. */
import type { IncomingMessage } from 'node:http';

/** A request target as API Gateway reads it: its path as sent, its query, and the authority of an absolute-form target. */
export type RequestTarget = {
  /** The path exactly as sent: nothing decoded, no dot segment removed (matchRoute, ./proxy-event.ts, routes it). */
  readonly path: string;
  readonly query: URLSearchParams;
  /** `host:port` of an absolute-form target (`GET http://127.0.0.1:3000/v1/… HTTP/1.1`), which stands for Host (RFC 9112 §3.2.2). */
  readonly authority?: string;
};

const absoluteForm = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)(.*)$/s;

/**
 * The request target, split as sent. It is never resolved against a base URL as a URL parser
 * would: `//evil.example/v2/…` is a path whose first segments are empty and `evil.example`, not
 * another host, and `x/%2e%2e/281` keeps its three segments (docs/decisions.md, "Paths are
 * matched as API Gateway matches them").
 */
export const requestTarget = (req: IncomingMessage): RequestTarget => {
  const raw = req.url ?? '/';
  const absolute = absoluteForm.exec(raw);
  const rest = absolute === null ? raw : absolute[2] || '/';
  const at = rest.indexOf('?');
  return {
    path: at < 0 ? rest : rest.slice(0, at),
    query: new URLSearchParams(at < 0 ? '' : rest.slice(at + 1)),
    ...(absolute === null ? {} : { authority: absolute[1]! }),
  };
};

export const maxBodyBytes = 10 * 1024 * 1024; // API Gateway's payload limit

/** The body size the request announces (Content-Length), 0 without one (none, or chunked). */
export const declaredBodyBytes = (req: IncomingMessage) => Number(req.headers['content-length'] ?? 0) || 0;

/** Whether part of a request body may still be on its way (announced and not yet all read). */
export const bodyPending = (req: IncomingMessage) =>
  !req.complete && (declaredBodyBytes(req) > 0 || req.headers['transfer-encoding'] !== undefined);

/** The body as text, null when empty, undefined when over API Gateway's limit (its 413, a DEFAULT_4XX). */
export const readBody = async (req: IncomingMessage): Promise<string | null | undefined> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBodyBytes) return undefined;
    chunks.push(chunk);
  }
  return size === 0 ? null : Buffer.concat(chunks).toString('utf8');
};
