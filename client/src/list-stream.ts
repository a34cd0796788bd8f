/**
 * The v1 list's body read as it arrives: orders parsed a chunk at a time (memory holds one chunk,
 * whatever the store's size), a body that stops before its closing "]" reported as cut, and a body
 * that sends nothing for `idleTimeoutMs` closed and reported as stalled, so that a server that
 * sends one order and then nothing cannot hold a caller forever.
 */
import { InvalidResponseError, ResponseCutError, ResponseStalledError, type StoreOrdersError } from './errors.ts';
import type { CallMeta } from './hooks.ts';
import type { Int64Keys } from './json.ts';
import { JsonArrayStream } from './json-stream.ts';

/** An element of a list that is not an order with an int64 id (the parser made it a bigint). */
export const isOrderLike = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { id?: unknown }).id === 'bigint';

export const invalidResponse = (message: string, meta: Pick<CallMeta, 'requestId' | 'attempts'>, cause?: unknown): StoreOrdersError =>
  new InvalidResponseError({
    code: 'client_invalid_response',
    status: 200,
    message,
    requestId: meta.requestId,
    attempts: meta.attempts,
    cause,
  });

type Chunk = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>;
const stalled = Symbol('stalled');

/** The next chunk, or `stalled` when none came within `ms` (Infinity: no bound). */
const nextChunk = (reader: ReadableStreamDefaultReader<Uint8Array>, ms: number): Promise<Chunk | typeof stalled> => {
  if (ms === Infinity) return reader.read();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = new Promise<typeof stalled>((resolve) => {
    timer = setTimeout(() => resolve(stalled), ms);
  });
  return Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer));
};

export type StreamRead = {
  body: ReadableStream<Uint8Array>;
  meta: CallMeta;
  signal: AbortSignal;
  idleTimeoutMs: number;
  int64Keys: Int64Keys;
};

/** Each element of the list as it arrives; the reader is closed however the loop ends. */
export async function* readListBody(read: StreamRead): AsyncGenerator<Record<string, unknown>, void, undefined> {
  const { meta, signal, idleTimeoutMs } = read;
  const reader = read.body.getReader();
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const array = new JsonArrayStream(read.int64Keys);
  let ordersRead = 0;
  const details = () => ({ status: 200, requestId: meta.requestId, attempts: meta.attempts, ordersRead });
  try {
    for (;;) {
      let chunk: Chunk | typeof stalled;
      try {
        chunk = await nextChunk(reader, idleTimeoutMs);
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        throw new ResponseCutError({ code: 'client_response_cut', message: cutMessage(ordersRead), ...details(), cause: error });
      }
      if (chunk === stalled)
        throw new ResponseStalledError({
          code: 'client_response_stalled',
          message: `The list sent nothing for ${idleTimeoutMs} ms after ${ordersRead} orders (idleTimeoutMs): read it again`,
          ...details(),
          idleTimeoutMs,
        });
      const cut = (cause: unknown) =>
        new ResponseCutError({ code: 'client_response_cut', message: cutMessage(ordersRead), ...details(), cause });
      const elements = parseChunk(array, decoder, chunk, cut, meta);
      for (const element of elements) {
        if (!isOrderLike(element)) throw invalidResponse('The list holds an element that is not an order with an id', meta);
        yield element as Record<string, unknown>;
        ordersRead++;
      }
      if (chunk.done) return;
    }
  } finally {
    // An early break, a failure or a stall: close the response rather than leave it open.
    await reader.cancel().catch(() => undefined);
  }
}

const cutMessage = (ordersRead: number) => `The list was cut after ${ordersRead} orders, before its end: read it again`;

/** The elements a chunk completes; text that stops before the closing "]" is a cut, anything else not JSON of orders is invalid. */
const parseChunk = (
  array: JsonArrayStream,
  decoder: { decode: (input?: Uint8Array, options?: { stream?: boolean }) => string },
  chunk: Chunk,
  cut: (cause: unknown) => StoreOrdersError,
  meta: CallMeta,
): unknown[] => {
  try {
    if (!chunk.done) return array.push(decoder.decode(chunk.value, { stream: true }));
    const last = array.push(decoder.decode());
    array.end();
    return last;
  } catch (error) {
    if (chunk.done && !array.done) throw cut(error);
    throw invalidResponse(`The list is not a JSON array of orders: ${(error as Error).message}`, meta, error);
  }
};
