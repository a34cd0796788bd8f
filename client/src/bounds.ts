/**
 * The bounds on what a server sends: in time, a watchdog over each attempt that closes it when
 * nothing arrives for `idleTimeoutMs` (the connection and the answer's headers included); in
 * size, a body read that stops at a number of bytes, counted after decompression (what `fetch`
 * hands over), and closes the connection. Reads race the watchdog, so a `fetch` of the caller's
 * own that ignores its signal is bounded too.
 */
import type { StoreOrdersErrorDetails } from './errors.ts';
import { InvalidResponseError, ResponseTooLargeError } from './errors.ts';

/** Timers take at most this many milliseconds (a longer one fires at once): longer bounds are none. */
export const noBoundPast = 2_147_483_647;

/** One attempt's signal: aborted by the call's signal, or when nothing arrived for `ms` while it was watching. */
export class Watchdog {
  readonly #controller = new AbortController();
  readonly #parent: AbortSignal;
  readonly #ms: number;
  readonly #onParentAbort = () => this.#controller.abort(this.#parent.reason);
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Rejects with the abort's reason once the attempt is aborted. */
  readonly #aborted: Promise<never>;
  /** Whether the idle bound ended the attempt. */
  stalled = false;

  constructor(parent: AbortSignal, ms: number) {
    this.#parent = parent;
    this.#ms = ms;
    const signal = this.#controller.signal;
    this.#aborted = new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    this.#aborted.catch(() => undefined);
    if (parent.aborted) this.#onParentAbort();
    else parent.addEventListener('abort', this.#onParentAbort, { once: true });
    this.restart();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get idleTimeoutMs(): number {
    return this.#ms;
  }

  /** Starts (or restarts) the idle bound: the server must send something within it. */
  restart(): void {
    clearTimeout(this.#timer);
    if (this.#ms > noBoundPast || this.#controller.signal.aborted) return;
    this.#timer = setTimeout(() => {
      this.stalled = true;
      this.abort(new DOMException(`Nothing arrived for ${this.#ms} ms (idleTimeoutMs)`, 'TimeoutError'));
    }, this.#ms);
  }

  /** Stops the idle bound while the caller, not the server, holds things up (an order being handled). */
  pause(): void {
    clearTimeout(this.#timer);
  }

  /** Ends the attempt: its request and body are closed. */
  abort(reason: unknown): void {
    clearTimeout(this.#timer);
    this.#controller.abort(reason);
  }

  /** `promise`, or the abort's reason if the attempt is aborted first. */
  race<T>(promise: Promise<T>): Promise<T> {
    promise.catch(() => undefined);
    return Promise.race([promise, this.#aborted]);
  }

  /** Clears the timer and lets go of the call's signal. */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#parent.removeEventListener('abort', this.#onParentAbort);
  }
}

export type BodyRead = {
  watch: Watchdog;
  /** The most bytes (after decompression) accepted. */
  maxBytes: number;
  /** Restart the idle bound at each chunk (a page), or not: the whole body within one bound (an error body). */
  eachChunk: boolean;
  /** What the errors say of the answer. */
  details: Pick<StoreOrdersErrorDetails, 'status' | 'requestId' | 'attempts'>;
  /** What the body is, in messages ("The page", "The error body"). */
  what: string;
};

/**
 * The body's text, at most `maxBytes` after decompression, or a `ResponseTooLargeError` once it
 * passes them (the connection closed); a body that is not UTF-8 is an `InvalidResponseError`. A
 * stall or an abort rejects with the watchdog's reason.
 */
export const readBody = async (response: Response, read: BodyRead): Promise<string> => {
  if (response.body === null) return '';
  const { watch, maxBytes, details, what } = read;
  const reader = response.body.getReader();
  // The bytes as they came, decoded once whole: a body past its bound leaves no text behind.
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let whole = false;
  try {
    for (;;) {
      const chunk = await watch.race(reader.read());
      if (chunk.done) break;
      bytes += chunk.value.byteLength;
      if (bytes > maxBytes) {
        watch.abort(new DOMException(`${what} passed ${maxBytes} bytes`, 'AbortError'));
        throw new ResponseTooLargeError({
          code: 'client_response_too_large',
          message: `${what} passed ${maxBytes} bytes (after decompression), the most the client accepts: the connection was closed`,
          ...details,
          limitBytes: maxBytes,
        });
      }
      if (read.eachChunk) watch.restart();
      chunks.push(chunk.value);
    }
    whole = true;
  } finally {
    if (!whole) await reader.cancel().catch(() => undefined);
  }
  return decode(joined(chunks, bytes), details, what);
};

/** The chunks as one array (the chunk itself when there is one). */
const joined = (chunks: Uint8Array[], bytes: number): Uint8Array => {
  if (chunks.length === 1) return chunks[0]!;
  const all = new Uint8Array(bytes);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all;
};

const decode = (bytes: Uint8Array, details: BodyRead['details'], what: string): string => {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw new InvalidResponseError({ code: 'client_invalid_response', message: `${what} is not UTF-8`, ...details, cause: error });
  }
};
