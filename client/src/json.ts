/**
 * JSON that keeps int64 exact, without a dependency and without `JSON.parse`'s reviver source
 * text (absent on Node 20): a small recursive-descent parser in which the values of the keys
 * named int64 (`id`, `petId`) become `bigint`, and every other number a `number`.
 *
 * `JsonArrayStream` reads a top-level array as its text arrives, element by element: it keeps only
 * the text of the element being read, so its memory does not grow with the array.
 */

/** The text is not JSON (or not the JSON expected). */
export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
}

/** The text ended inside a value: more may come (internal to the stream reader). */
const incomplete = Symbol('incomplete');

/** Nesting deeper than this is refused (an order is flat; this only bounds the recursion). */
const maxDepth = 64;

const numberPattern = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const integerPattern = /^-?(?:0|[1-9]\d*)$/;

type Parsed = { value: unknown; end: number };

/** Reads JSON values out of `text`; `final` says no more text follows it. */
class ValueReader {
  text: string;
  final: boolean;
  readonly int64Keys: ReadonlySet<string>;

  constructor(text: string, final: boolean, int64Keys: ReadonlySet<string>) {
    this.text = text;
    this.final = final;
    this.int64Keys = int64Keys;
  }

  fail(message: string, at: number): never {
    throw new JsonSyntaxError(`${message} at offset ${at}`);
  }

  /** The index of the first non-whitespace character at or after `at` (text.length if none). */
  skipSpace(at: number): number {
    const { text } = this;
    let i = at;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    }
    return i;
  }

  /** The next significant character's index, or `incomplete` when the text ends first. */
  next(at: number): number {
    const i = this.skipSpace(at);
    if (i < this.text.length) return i;
    if (this.final) this.fail('Unexpected end of JSON', i);
    throw incomplete;
  }

  value(at: number, depth: number, int64: boolean): Parsed {
    const i = this.next(at);
    const c = this.text.charCodeAt(i);
    // An int64 field holds an integer, or null.
    if (int64 && c !== 0x2d && !(c >= 0x30 && c <= 0x39) && c !== 0x6e) this.fail('Expected an integer', i);
    if (c === 0x22) return this.string(i);
    if (c === 0x7b) return this.object(i, depth + 1);
    if (c === 0x5b) return this.array(i, depth + 1);
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number(i, int64);
    return this.literal(i);
  }

  string(at: number): Parsed {
    const { text } = this;
    const close = text.indexOf('"', at + 1);
    if (close === -1) return this.endOfText(at, 'Unterminated string');
    const backslash = text.indexOf('\\', at + 1);
    if (backslash === -1 || backslash > close) return { value: text.slice(at + 1, close), end: close + 1 };
    // Escapes: find the real end, then let JSON.parse decode the string (exactly as JSON says).
    let i = backslash;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x5c) i += 2;
      else if (c === 0x22) break;
      else i++;
    }
    if (i >= text.length) return this.endOfText(at, 'Unterminated string');
    try {
      return { value: JSON.parse(text.slice(at, i + 1)) as string, end: i + 1 };
    } catch {
      return this.fail('Invalid string escape', at);
    }
  }

  number(at: number, int64: boolean): Parsed {
    const { text } = this;
    let end = at + 1;
    for (; end < text.length; end++) {
      const c = text.charCodeAt(end);
      // Digits, ".", "e", "E", "+", "-": the characters a number is made of.
      if (!((c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d)) break;
    }
    if (end === text.length && !this.final) throw incomplete;
    const source = text.slice(at, end);
    if (!numberPattern.test(source)) this.fail(`Invalid number ${source}`, at);
    if (!int64) return { value: Number(source), end };
    if (!integerPattern.test(source)) this.fail(`Expected an integer, got ${source}`, at);
    return { value: BigInt(source), end };
  }

  literal(at: number): Parsed {
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.text.startsWith(word, at)) return { value, end: at + word.length };
      if (word.startsWith(this.text.slice(at)) && !this.final) throw incomplete;
    }
    return this.fail(`Unexpected character ${JSON.stringify(this.text[at])}`, at);
  }

  object(at: number, depth: number): Parsed {
    if (depth > maxDepth) this.fail('Nesting too deep', at);
    const result: Record<string, unknown> = {};
    let i = this.next(at + 1);
    if (this.text.charCodeAt(i) === 0x7d) return { value: result, end: i + 1 };
    for (;;) {
      if (this.text.charCodeAt(i) !== 0x22) this.fail('Expected a property name', i);
      const key = this.string(i);
      i = this.next(key.end);
      if (this.text.charCodeAt(i) !== 0x3a) this.fail('Expected ":"', i);
      const name = key.value as string;
      const member = this.value(i + 1, depth, this.int64Keys.has(name));
      // An own property even for "__proto__", as JSON.parse makes it.
      if (name === '__proto__')
        Object.defineProperty(result, name, { value: member.value, enumerable: true, writable: true, configurable: true });
      else result[name] = member.value;
      i = this.next(member.end);
      const c = this.text.charCodeAt(i);
      if (c === 0x7d) return { value: result, end: i + 1 };
      if (c !== 0x2c) this.fail('Expected "," or "}"', i);
      i = this.next(i + 1);
    }
  }

  array(at: number, depth: number): Parsed {
    if (depth > maxDepth) this.fail('Nesting too deep', at);
    const result: unknown[] = [];
    let i = this.next(at + 1);
    if (this.text.charCodeAt(i) === 0x5d) return { value: result, end: i + 1 };
    for (;;) {
      const element = this.value(i, depth, false);
      result.push(element.value);
      i = this.next(element.end);
      const c = this.text.charCodeAt(i);
      if (c === 0x5d) return { value: result, end: i + 1 };
      if (c !== 0x2c) this.fail('Expected "," or "]"', i);
      i += 1;
    }
  }

  endOfText(at: number, message: string): never {
    if (this.final) this.fail(message, at);
    throw incomplete;
  }
}

/** The keys whose integer values are int64 on the wire (Order's `id` and `petId`). */
export type Int64Keys = ReadonlySet<string>;

/** Parses a whole JSON text; the values of `int64Keys` become bigint (or null). */
export const parseJsonExact = (text: string, int64Keys: Int64Keys): unknown => {
  const reader = new ValueReader(text, true, int64Keys);
  const { value, end } = reader.value(0, 0, false);
  const rest = reader.skipSpace(end);
  if (rest !== text.length) reader.fail('Unexpected text after JSON', rest);
  return value;
};

type ArrayState = 'start' | 'first' | 'element' | 'separator' | 'done';

/**
 * A top-level JSON array read as its text arrives: `push(chunk)` returns the elements completed
 * so far, `end()` throws unless the array was closed. Only the unread tail is kept between chunks.
 */
export class JsonArrayStream {
  #reader: ValueReader;
  #state: ArrayState = 'start';
  /** Characters dropped from the front of the kept text, for offsets in messages. */
  #consumed = 0;

  constructor(int64Keys: Int64Keys) {
    this.#reader = new ValueReader('', false, int64Keys);
  }

  /** Whether the closing `]` has been read. */
  get done(): boolean {
    return this.#state === 'done';
  }

  push(chunk: string): unknown[] {
    const reader = this.#reader;
    reader.text = reader.text === '' ? chunk : reader.text + chunk;
    const elements: unknown[] = [];
    let at = 0;
    try {
      for (;;) at = this.#step(at, elements);
    } catch (error) {
      if (error !== incomplete) throw this.#withOffset(error);
    }
    this.#consumed += at;
    reader.text = reader.text.slice(at);
    return elements;
  }

  /** The text has ended: throws when the array is not complete or something follows it. */
  end(): void {
    const reader = this.#reader;
    reader.final = true;
    if (this.#state !== 'done')
      throw new JsonSyntaxError(`The array ended before its closing "]" (offset ${this.#consumed + reader.text.length})`);
    const rest = reader.skipSpace(0);
    if (rest !== reader.text.length) throw new JsonSyntaxError(`Unexpected text after the array at offset ${this.#consumed + rest}`);
  }

  /** One step of the array's grammar from `at`; returns where the next step starts, or throws `incomplete`. */
  #step(at: number, elements: unknown[]): number {
    const reader = this.#reader;
    if (this.#state === 'done') {
      const rest = reader.skipSpace(at);
      if (rest !== reader.text.length) reader.fail('Unexpected text after the array', rest);
      throw incomplete;
    }
    const i = reader.next(at);
    const c = reader.text.charCodeAt(i);
    switch (this.#state) {
      case 'start':
        if (c !== 0x5b) reader.fail('Expected "["', i);
        this.#state = 'first';
        return i + 1;
      case 'first':
      case 'separator':
        if (c === 0x5d) {
          this.#state = 'done';
          return i + 1;
        }
        if (this.#state === 'separator') {
          if (c !== 0x2c) reader.fail('Expected "," or "]"', i);
          this.#state = 'element';
          return i + 1;
        }
        return this.#element(i, elements);
      case 'element':
        return this.#element(i, elements);
    }
  }

  #element(at: number, elements: unknown[]): number {
    const { value, end } = this.#reader.value(at, 1, false);
    elements.push(value);
    this.#state = 'separator';
    return end;
  }

  #withOffset(error: unknown): unknown {
    if (!(error instanceof JsonSyntaxError) || this.#consumed === 0) return error;
    return new JsonSyntaxError(error.message.replace(/at offset (\d+)$/, (_, at: string) => `at offset ${Number(at) + this.#consumed}`));
  }
}
