/**
 * `JsonArrayStream`: a top-level JSON array of orders (the v1 list) read as its text arrives,
 * element by element. It keeps only the text of the element being read, so its memory does not
 * grow with the array; each chunk's complete elements are parsed at once by `parseOrdersJson`.
 */
import { type Int64Keys, JsonSyntaxError, closingQuote, isSpace } from './json.ts';
import { parseOrdersJson } from './orders-json.ts';

/**
 * A top-level JSON array of objects (the v1 list) read as its text arrives: `push(chunk)` returns
 * the elements completed so far, `end()` throws unless the array was closed. Only the unread tail
 * is kept between chunks. A scan finds where elements end (strings skipped with `indexOf`); the
 * chunk's complete elements are read at once by `parseOrdersJson`.
 */
export class JsonArrayStream {
  readonly #int64Keys: Int64Keys;
  #text = '';
  /** Characters dropped from the front of the kept text, for offsets in messages. */
  #consumed = 0;
  /** Where the scan goes on from, in #text. */
  #at = 0;
  #state: 'start' | 'value' | 'separator' | 'done' = 'start';
  #first = true;
  /** Inside an element: its start and nesting depth. */
  #elementStart = -1;
  #depth = 0;
  /** The complete elements of this chunk: from the first one's start to the last one's end. */
  #batchStart = -1;
  #batchEnd = -1;

  constructor(int64Keys: Int64Keys) {
    this.#int64Keys = int64Keys;
  }

  get done(): boolean {
    return this.#state === 'done';
  }

  push(chunk: string): unknown[] {
    this.#text = this.#text === '' ? chunk : this.#text + chunk;
    this.#batchStart = -1;
    this.#scan();
    const batch = this.#batchStart < 0 ? '' : this.#text.slice(this.#batchStart, this.#batchEnd);
    const consumedBefore = this.#consumed;
    // Keep from the start of the element being read (or the scan position between elements).
    const keep = this.#elementStart >= 0 ? this.#elementStart : this.#at;
    this.#text = this.#text.slice(keep);
    this.#consumed += keep;
    this.#at -= keep;
    if (this.#elementStart >= 0) this.#elementStart = 0;
    if (batch === '') return [];
    try {
      return parseOrdersJson(`[${batch}]`, this.#int64Keys, (value) => value) as unknown[];
    } catch (error) {
      throw new JsonSyntaxError(`Invalid element after offset ${consumedBefore + this.#batchStart}: ${(error as Error).message}`);
    }
  }

  end(): void {
    if (this.#state !== 'done')
      throw new JsonSyntaxError(`The array ended before its closing "]" (offset ${this.#consumed + this.#text.length})`);
  }

  #fail(message: string, at: number): never {
    throw new JsonSyntaxError(`${message} at offset ${this.#consumed + at}`);
  }

  /** Scans #text from #at, noting the span of the complete elements. */
  #scan(): void {
    const text = this.#text;
    let i = this.#at;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (this.#depth > 0) {
        i = this.#inElement(text, i);
        if (i < 0) return;
        continue;
      }
      if (isSpace(c)) {
        i++;
        continue;
      }
      if (this.#state === 'done') this.#fail('Unexpected text after the array', i);
      if (this.#state === 'start') {
        if (c !== 0x5b) this.#fail('Expected "["', i);
        this.#state = 'value';
      } else if (this.#state === 'separator') {
        if (c === 0x5d) this.#state = 'done';
        else if (c === 0x2c) this.#state = 'value';
        else this.#fail('Expected "," or "]"', i);
      } else if (c === 0x5d && this.#first) {
        this.#state = 'done';
      } else if (c === 0x7b) {
        this.#elementStart = i;
        this.#depth = 1;
      } else {
        this.#fail('Expected an object', i);
      }
      i++;
    }
    this.#at = i;
  }

  /** Scans inside an element from `i` (the hot path); the index after its closing brace, or -1 when the text ends inside it. */
  #inElement(text: string, i: number): number {
    let depth = this.#depth;
    const length = text.length;
    while (i < length) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        const end = closingQuote(text, i + 1);
        if (end < 0) break;
        i = end + 1;
      } else if (c === 0x7b || c === 0x5b) {
        depth++;
        i++;
      } else if (c === 0x7d || c === 0x5d) {
        i++;
        if (--depth === 0) {
          if (this.#batchStart < 0) this.#batchStart = this.#elementStart;
          this.#batchEnd = i;
          this.#depth = 0;
          this.#elementStart = -1;
          this.#state = 'separator';
          this.#first = false;
          return i;
        }
      } else i++;
    }
    this.#depth = depth;
    this.#at = i;
    return -1;
  }
}
