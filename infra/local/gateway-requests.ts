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
 * another host, and `x/%2e%2e/281` keeps its three segments (docs/developing.md#small-decisions).
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

/** What reading a body came to: the body (null when empty), a refusal to answer with, or a client gone. */
export type BodyRead = { readonly body: string | null } | { readonly refused: string } | { readonly gone: true };

/**
 * Reads the body, as text, within API Gateway's size limit (its 413 is a DEFAULT_4XX, 400 here)
 * and at no less than `minBytesPerSecond` once `graceMs` have passed: by then each second must
 * have brought that many bytes more. A refused body is left unread (the connection is ended after
 * the answer); nothing is destroyed here, so the answer can still be sent.
 */
export const readBody = (req: IncomingMessage, rate: { graceMs: number; minBytesPerSecond: number }): Promise<BodyRead> =>
  new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const startedAt = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const done = (result: BodyRead) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('close', onClose);
      if (!('body' in result)) req.pause();
      resolve(result);
    };
    /** The body must be whole, or have grown, by grace + bytes so far / rate. */
    const watch = () => {
      clearTimeout(timer);
      const deadline = startedAt + rate.graceMs + (size * 1000) / rate.minBytesPerSecond;
      timer = setTimeout(
        () => done({ refused: `The request body arrived slower than ${rate.minBytesPerSecond} bytes a second.` }),
        Math.max(0, deadline - performance.now()),
      );
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) return done({ refused: `The request body exceeds ${maxBodyBytes} bytes.` });
      chunks.push(chunk);
      watch();
    };
    const onEnd = () => done({ body: size === 0 ? null : Buffer.concat(chunks).toString('utf8') });
    const onClose = () => done({ gone: true });
    req.on('data', onData).on('end', onEnd).on('close', onClose);
    watch();
  });
