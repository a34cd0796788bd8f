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

/** What an int64 number is rewritten to before JSON.parse reads the element: a string with this mark in front. */
const int64Mark = '~';

/**
 * A top-level JSON array of objects (the v1 list) read as its text arrives: `push(chunk)` returns
 * the elements completed so far, `end()` throws unless the array was closed. Only the unread tail
 * is kept between chunks.
 *
 * Fast because `JSON.parse` does the parsing: a scan (strings skipped with `indexOf`) finds where
 * each element ends and where an int64 field's number is, those numbers are quoted with a mark,
 * the chunk's complete elements are parsed with one `JSON.parse`, and the marked strings become
 * bigint. An int64 field whose value is not a plain integer (a string, a fraction, a key written
 * with escapes so the scan cannot see it) is refused, never rounded.
 */
export class JsonArrayStream {
  readonly #int64Keys: ReadonlySet<string>;
  #text = '';
  /** Characters dropped from the front of the kept text, for offsets in messages. */
  #consumed = 0;
  /** Where the scan goes on from, in #text. */
  #at = 0;
  #state: 'start' | 'value' | 'separator' | 'done' = 'start';
  #first = true;
  /** Inside an element: its start, nesting depth and the int64 numbers found in it. */
  #elementStart = -1;
  #depth = 0;
  #marks: number[] = [];
  /** The last string closed at depth 1 (a key, when a ":" follows). */
  #keyStart = -1;
  #keyEnd = -1;

  constructor(int64Keys: Int64Keys) {
    this.#int64Keys = int64Keys;
  }

  get done(): boolean {
    return this.#state === 'done';
  }

  push(chunk: string): unknown[] {
    this.#text = this.#text === '' ? chunk : this.#text + chunk;
    const pieces: string[] = [];
    this.#scan(pieces);
    // Keep from the start of the element being read (or the scan position between elements).
    const keep = this.#elementStart >= 0 ? this.#elementStart : this.#at;
    this.#text = this.#text.slice(keep);
    this.#consumed += keep;
    this.#at -= keep;
    if (this.#elementStart >= 0) {
      this.#keyStart -= keep;
      this.#keyEnd -= keep;
      this.#marks = this.#marks.map((mark) => mark - keep);
      this.#elementStart = 0;
    }
    return pieces.length === 0 ? [] : this.#parse(pieces);
  }

  end(): void {
    if (this.#state !== 'done')
      throw new JsonSyntaxError(`The array ended before its closing "]" (offset ${this.#consumed + this.#text.length})`);
  }

  #fail(message: string, at: number): never {
    throw new JsonSyntaxError(`${message} at offset ${this.#consumed + at}`);
  }

  /** Scans #text from #at; each complete element's text (int64 numbers marked) goes to `pieces`. */
  #scan(pieces: string[]): void {
    const text = this.#text;
    let i = this.#at;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (this.#depth > 0) {
        i = this.#inElement(text, i, pieces);
        if (i < 0) return;
        continue;
      }
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
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
        this.#marks = [];
      } else {
        this.#fail('Expected an object', i);
      }
      i++;
    }
    this.#at = i;
  }

  /**
   * Scans inside an element from `i` (a tight loop with locals: this is the hot path); returns
   * the index after the element's closing brace, or -1 when the text ends inside it.
   */
  #inElement(text: string, i: number, pieces: string[]): number {
    let depth = this.#depth;
    let keyStart = this.#keyStart;
    let keyEnd = this.#keyEnd;
    const int64Keys = this.#int64Keys;
    const length = text.length;
    const save = (at: number) => {
      this.#depth = depth;
      this.#keyStart = keyStart;
      this.#keyEnd = keyEnd;
      this.#at = at;
      return -1;
    };
    while (i < length) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        const end = closingQuote(text, i + 1);
        if (end < 0) return save(i);
        if (depth === 1) {
          keyStart = i + 1;
          keyEnd = end;
        }
        i = end + 1;
      } else if (c === 0x7b || c === 0x5b) {
        depth++;
        i++;
      } else if (c === 0x7d || c === 0x5d) {
        i++;
        if (--depth === 0) {
          pieces.push(this.#marked(text, i));
          this.#depth = 0;
          this.#elementStart = -1;
          this.#state = 'separator';
          this.#first = false;
          return i;
        }
      } else if (c === 0x3a && depth === 1 && int64Keys.has(text.slice(keyStart, keyEnd))) {
        let start = i + 1;
        while (start < length && isSpace(text.charCodeAt(start))) start++;
        if (start === length) return save(i);
        const d = text.charCodeAt(start);
        if (d === 0x2d || (d >= 0x30 && d <= 0x39)) {
          let end = start + 1;
          while (end < length && isNumberChar(text.charCodeAt(end))) end++;
          if (end === length) return save(i);
          this.#marks.push(start, end);
          i = end;
        } else i = start;
      } else i++;
    }
    return save(i);
  }

  /** The element's text from #elementStart to `end`, each int64 number quoted with the mark. */
  #marked(text: string, end: number): string {
    const marks = this.#marks;
    if (marks.length === 0) return text.slice(this.#elementStart, end);
    let out = '';
    let from = this.#elementStart;
    for (let m = 0; m < marks.length; m += 2) {
      out += `${text.slice(from, marks[m])}"${int64Mark}${text.slice(marks[m], marks[m + 1])}"`;
      from = marks[m + 1]!;
    }
    return out + text.slice(from, end);
  }

  /** The chunk's complete elements, parsed by JSON.parse at once; marked int64 strings become bigint. */
  #parse(pieces: string[]): unknown[] {
    let elements: Record<string, unknown>[];
    try {
      elements = JSON.parse(`[${pieces.join(',')}]`) as Record<string, unknown>[];
    } catch (error) {
      throw new JsonSyntaxError(`Invalid element before offset ${this.#consumed + this.#at}: ${(error as Error).message}`);
    }
    for (const element of elements)
      for (const key of this.#int64Keys) {
        const value = element[key];
        if (value === undefined || value === null) continue;
        if (typeof value !== 'string' || value[0] !== int64Mark || !integerPattern.test(value.slice(1)))
          throw new JsonSyntaxError(
            `Expected an integer for "${key}", got ${typeof value === 'string' && value[0] === int64Mark ? value.slice(1) : JSON.stringify(value)}`,
          );
        element[key] = BigInt(value.slice(1));
      }
    return elements;
  }
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
/** Digits, ".", "e", "E", "+", "-": the characters a number is made of. */
const isNumberChar = (c: number) => (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;

/** The index of the quote that closes a string whose content starts at `from` (-1: not in the text yet). */
const closingQuote = (text: string, from: number): number => {
  for (let at = text.indexOf('"', from); at >= 0; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
};
