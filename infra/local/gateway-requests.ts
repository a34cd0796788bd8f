/** Reading a request as API Gateway does: its target, its body within API Gateway's payload limit. */
import type { IncomingMessage } from 'node:http';

/** The request target as a URL (origin-form or absolute-form), undefined when it is none. */
export const requestUrl = (req: IncomingMessage): URL | undefined => {
  try {
    return new URL(req.url ?? '/', 'http://localhost');
  } catch {
    return undefined;
  }
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
