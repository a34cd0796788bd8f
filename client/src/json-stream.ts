/**
 * `JsonArrayStream`: a top-level JSON array of orders (the v1 list) read as its text arrives,
 * element by element. Each chunk is scanned once (the scan's state, strings included, carries
 * over to the next chunk); only the text of an element still open at a chunk's end is kept, in
 * pieces, up to the element bound, so memory grows neither with the array nor with one element
 * that never closes.
 */
import { type Int64Keys, JsonSyntaxError, isSpace } from './json.ts';
import { parseOrdersJson } from './orders-json.ts';

/** An element past its bound: the stream stops there. */
export class JsonElementTooLargeError extends JsonSyntaxError {
  override name = 'JsonElementTooLargeError';
  readonly limitBytes: number;
  constructor(limitBytes: number, at: number) {
    super(`An element passed ${limitBytes} bytes (after offset ${at})`);
    this.limitBytes = limitBytes;
  }
}

export type JsonArrayStreamOptions = {
  /** The largest element accepted, in UTF-8 bytes (default: no bound). */
  maxElementBytes?: number | undefined;
};

/**
 * A top-level JSON array of objects (the v1 list) read as its text arrives: `push(chunk)` returns
 * the elements completed so far, `end()` throws unless the array was closed. A scan finds where
 * elements end (strings skipped with `indexOf`); the chunk's complete elements are read at once by
 * `parseOrdersJson`. An element longer than `maxElementBytes` is `overflow`, thrown by the next
 * `push` or `end`, once the elements before it were returned.
 */
export class JsonArrayStream {
  readonly #int64Keys: Int64Keys;
  readonly #maxElementBytes: number;
  /** Characters before the current chunk, for offsets in messages. */
  #offset = 0;
  #state: 'start' | 'value' | 'separator' | 'done' = 'start';
  #first = true;
  /** Inside an element: its nesting depth (0 between elements), whether inside one of its strings. */
  #depth = 0;
  #inString = false;
  /** Backslashes that ended the last chunk inside a string: an odd count escapes the next chunk's first character. */
  #backslashes = 0;
  /** The text of an element still open at the last chunk's end, and its size in UTF-8 bytes. */
  #carried: string[] = [];
  #carriedBytes = 0;
  #carriedChars = 0;
  /** An element past the bound: thrown once the elements before it were handed over. */
  #overflow: JsonElementTooLargeError | undefined;

  constructor(int64Keys: Int64Keys, options: JsonArrayStreamOptions = {}) {
    this.#int64Keys = int64Keys;
    this.#maxElementBytes = options.maxElementBytes ?? Infinity;
  }

  get done(): boolean {
    return this.#state === 'done';
  }

  /** An element past the bound, found while reading the last chunk: the elements before it were returned, and `push` and `end` throw it. */
  get overflow(): JsonElementTooLargeError | undefined {
    return this.#overflow;
  }

  push(chunk: string): unknown[] {
    if (this.#overflow !== undefined) throw this.#overflow;
    const span = this.#scan(chunk);
    const batch = span === undefined ? '' : `${span.carried}${chunk.slice(span.start, span.end)}`;
    const batchOffset = span === undefined ? 0 : this.#offset + span.start - span.carried.length;
    if (this.#depth > 0 && this.#overflow === undefined) this.#carry(chunk, span?.open ?? 0);
    this.#offset += chunk.length;
    if (batch === '') return [];
    try {
      return parseOrdersJson(`[${batch}]`, this.#int64Keys, (value) => value) as unknown[];
    } catch (error) {
      throw new JsonSyntaxError(`Invalid element after offset ${batchOffset}: ${(error as Error).message}`);
    }
  }

  end(): void {
    if (this.#overflow !== undefined) throw this.#overflow;
    if (this.#state !== 'done') throw new JsonSyntaxError(`The array ended before its closing "]" (offset ${this.#offset})`);
  }

  #fail(message: string, at: number): never {
    throw new JsonSyntaxError(`${message} at offset ${this.#offset + at}`);
  }

  /**
   * Scans the chunk: the span of the elements it completes (the first may have begun in an
   * earlier chunk: `carried` is its text from there) and where an element still open at its end
   * began (`open`).
   */
  #scan(text: string): { start: number; end: number; carried: string; open: number } | undefined {
    let start = -1;
    let end = -1;
    let carried = '';
    let elementStart = this.#depth > 0 ? 0 : -1;
    let i = 0;
    while (i < text.length) {
      if (this.#depth > 0) {
        i = this.#inElement(text, i);
        if (this.#depth > 0) break;
        if (!this.#withinBound(text, elementStart, i)) break;
        if (start < 0) {
          start = elementStart;
          carried = this.#takeCarried();
        }
        end = i;
        elementStart = -1;
        continue;
      }
      const c = text.charCodeAt(i);
      if (!isSpace(c)) elementStart = this.#between(c, i) ? i : elementStart;
      i++;
    }
    if (start < 0) return this.#depth > 0 ? { start: 0, end: 0, carried: '', open: elementStart } : undefined;
    return { start, end, carried, open: elementStart };
  }

  /** A character between elements; true when it opens one. */
  #between(c: number, at: number): boolean {
    if (this.#state === 'done') this.#fail('Unexpected text after the array', at);
    if (this.#state === 'start') {
      if (c !== 0x5b) this.#fail('Expected "["', at);
      this.#state = 'value';
    } else if (this.#state === 'separator') {
      if (c === 0x5d) this.#state = 'done';
      else if (c === 0x2c) this.#state = 'value';
      else this.#fail('Expected "," or "]"', at);
    } else if (c === 0x5d && this.#first) {
      this.#state = 'done';
    } else if (c === 0x7b) {
      this.#depth = 1;
      return true;
    } else {
      this.#fail('Expected an object', at);
    }
    return false;
  }

  /** Scans inside an element from `i` (the hot path): the index after its closing brace, or the chunk's length when it ends inside. */
  #inElement(text: string, i: number): number {
    let depth = this.#depth;
    const length = text.length;
    if (this.#inString) i = this.#stringEnd(text, i);
    while (i >= 0 && i < length) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        this.#inString = true;
        this.#backslashes = 0;
        i = this.#stringEnd(text, i + 1);
      } else if (c === 0x7b || c === 0x5b) {
        depth++;
        i++;
      } else if (c === 0x7d || c === 0x5d) {
        i++;
        if (--depth === 0) {
          this.#depth = 0;
          this.#state = 'separator';
          this.#first = false;
          return i;
        }
      } else i++;
    }
    this.#depth = depth;
    return length;
  }

  /** In a string from `from`: the index after its closing quote, or -1 when the chunk ends inside it. */
  #stringEnd(text: string, from: number): number {
    for (let at = text.indexOf('"', from); at >= 0; at = text.indexOf('"', at + 1)) {
      let run = 0;
      while (at - 1 - run >= from && text.charCodeAt(at - 1 - run) === 0x5c) run++;
      if (at - run === from) run += this.#backslashes;
      if (run % 2 === 0) {
        this.#inString = false;
        return at + 1;
      }
    }
    let run = 0;
    while (text.length - 1 - run >= from && text.charCodeAt(text.length - 1 - run) === 0x5c) run++;
    this.#backslashes = text.length - run === from ? this.#backslashes + run : run;
    return -1;
  }

  /** The carried text of the element that just closed, and no more carried. */
  #takeCarried(): string {
    const text = this.#carried.join('');
    this.#carried = [];
    this.#carriedBytes = 0;
    this.#carriedChars = 0;
    return text;
  }

  /** Keeps the text of the element open at the chunk's end (from `open`), within the bound. */
  #carry(chunk: string, open: number): void {
    const piece = chunk.slice(open);
    this.#carried.push(piece);
    this.#carriedChars += piece.length;
    if (this.#maxElementBytes === Infinity) return;
    this.#carriedBytes += utf8Length(piece);
    if (this.#carriedBytes <= this.#maxElementBytes) return;
    this.#overflow = new JsonElementTooLargeError(this.#maxElementBytes, this.#offset + open - (this.#carriedChars - piece.length));
    this.#carried = [];
  }

  /** Whether the element from `start` (after the carried text) to `end` is within the bound; if not, it is the overflow. */
  #withinBound(text: string, start: number, end: number): boolean {
    const chars = this.#carriedChars + end - start;
    // A character is 1 to 3 bytes (a surrogate pair, two characters, 4): count only when it may matter.
    if (chars * 3 <= this.#maxElementBytes) return true;
    if (chars <= this.#maxElementBytes && this.#carriedBytes + utf8Length(text, start, end) <= this.#maxElementBytes) return true;
    this.#overflow = new JsonElementTooLargeError(this.#maxElementBytes, this.#offset + start - this.#carriedChars);
    this.#carried = [];
    return false;
  }
}

/** The UTF-8 length of `text` from `start` to `end`. */
const utf8Length = (text: string, start = 0, end = text.length): number => {
  let bytes = end - start;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    // Each half of a surrogate pair counts 2: 4 for the pair.
    if (c >= 0x80) bytes += c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 1 : 2;
  }
  return bytes;
};
