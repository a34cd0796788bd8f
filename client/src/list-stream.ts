/**
 * The v1 list's body read as it arrives: orders parsed a chunk at a time (memory holds one chunk
 * and one order, whatever the store's size), a body that stops before its closing "]" reported as
 * cut, one that sends nothing for `idleTimeoutMs` closed and reported as stalled, and an order
 * past `maxOrderBytes` closed and reported as too large, so that a server that sends one order
 * and then nothing, or one order that never ends, can hold neither a caller nor its memory.
 */
import type { Watchdog } from './bounds.ts';
import { InvalidResponseError, ResponseCutError, ResponseStalledError, ResponseTooLargeError, type StoreOrdersError } from './errors.ts';
import type { CallMeta } from './hooks.ts';
import { stopped } from './http.ts';
import type { Int64Keys } from './json.ts';
import { JsonArrayStream, JsonElementTooLargeError } from './json-stream.ts';

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

export type StreamRead = {
  body: ReadableStream<Uint8Array>;
  meta: CallMeta;
  /** The call's signal: its abort is the call's. */
  signal: AbortSignal;
  /** The attempt's watchdog: the idle bound runs while the client waits for the server, not while the caller holds an order. */
  watch: Watchdog;
  int64Keys: Int64Keys;
  maxOrderBytes: number;
};

/** Each element of the list as it arrives; the reader is closed however the loop ends. */
export async function* readListBody(read: StreamRead): AsyncGenerator<Record<string, unknown>, void, undefined> {
  const { meta, watch } = read;
  const reader = read.body.getReader();
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const array = new JsonArrayStream(read.int64Keys, { maxElementBytes: read.maxOrderBytes });
  let ordersRead = 0;
  const details = () => ({ status: 200, requestId: meta.requestId, attempts: meta.attempts, ordersRead });
  try {
    for (;;) {
      const chunk = await nextChunk(reader, read, details);
      const elements = parseChunk(array, decoder, chunk, { meta, details: details(), maxOrderBytes: read.maxOrderBytes });
      for (const element of elements) {
        if (!isOrderLike(element)) throw invalidResponse('The list holds an element that is not an order with an id', meta);
        yield element as Record<string, unknown>;
        ordersRead++;
      }
      if (array.overflow !== undefined) throw tooLarge(read.maxOrderBytes, details());
      if (chunk.done) return;
    }
  } finally {
    // An early break, a failure or a stall: close the response rather than leave it open.
    watch.pause();
    await reader.cancel().catch(() => undefined);
  }
}

/** The next chunk, within the idle bound (paused again once it came); a stall, an abort or a cut as its error. */
const nextChunk = async (
  reader: ReadableStreamDefaultReader<Uint8Array>,
  { watch, signal, meta }: StreamRead,
  details: () => { status: number; requestId: string | undefined; attempts: number; ordersRead: number },
): Promise<Chunk> => {
  const idle = watch.idleTimeoutMs;
  watch.restart();
  try {
    return await watch.race(reader.read());
  } catch (error) {
    if (signal.aborted) throw stopped(signal.reason, undefined, meta.attempts);
    if (watch.stalled)
      throw new ResponseStalledError({
        code: 'client_response_stalled',
        message: `The list sent nothing for ${idle} ms after ${details().ordersRead} orders (idleTimeoutMs): read it again`,
        ...details(),
        idleTimeoutMs: idle,
      });
    throw new ResponseCutError({ code: 'client_response_cut', message: cutMessage(details().ordersRead), ...details(), cause: error });
  } finally {
    watch.pause();
  }
};

const tooLarge = (maxOrderBytes: number, details: ChunkContext['details']) =>
  new ResponseTooLargeError({
    code: 'client_response_too_large',
    message: `An order of the list passed ${maxOrderBytes} bytes (after decompression), the most the client accepts (maxOrderBytes), after ${details.ordersRead} orders: the connection was closed`,
    ...details,
    limitBytes: maxOrderBytes,
  });

const cutMessage = (ordersRead: number) => `The list was cut after ${ordersRead} orders, before its end: read it again`;

type ChunkContext = {
  meta: CallMeta;
  details: { status: number; requestId: string | undefined; attempts: number; ordersRead: number };
  maxOrderBytes: number;
};

/**
 * The elements a chunk completes; text that stops before the closing "]" is a cut, an order past
 * the bound is too large, anything else not JSON of orders is invalid.
 */
const parseChunk = (
  array: JsonArrayStream,
  decoder: { decode: (input?: Uint8Array, options?: { stream?: boolean }) => string },
  chunk: Chunk,
  { meta, details, maxOrderBytes }: ChunkContext,
): unknown[] => {
  try {
    if (!chunk.done) return array.push(decoder.decode(chunk.value, { stream: true }));
    const last = array.push(decoder.decode());
    array.end();
    return last;
  } catch (error) {
    if (error instanceof JsonElementTooLargeError) throw tooLarge(maxOrderBytes, details);
    if (chunk.done && !array.done)
      throw new ResponseCutError({ code: 'client_response_cut', message: cutMessage(details.ordersRead), ...details, cause: error });
    throw invalidResponse(`The list is not a JSON array of orders: ${(error as Error).message}`, meta, error);
  }
};
