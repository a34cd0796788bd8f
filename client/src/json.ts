/**
 * JSON that keeps int64 exact, without a dependency and without `JSON.parse`'s reviver source
 * text (absent on Node 20). One rule for every parser of the client: a member named int64 (`id`,
 * `petId`) holds a JSON integer within int64 (-9223372036854775808 … 9223372036854775807) and
 * becomes a `bigint`; anything else there (a string, `null`, a fraction, an exponent, a number
 * past int64) is refused with a `JsonSyntaxError`, never rounded.
 *
 * This module holds that rule (`int64Value`) and `parseJsonExact`, a small recursive-descent
 * parser that applies it wherever the member is: exact, and the fallback of the fast path
 * (orders-json.ts) whenever that cannot vouch for a text.
 */

/** The text is not JSON, or not the JSON expected (an int64 member not in the documented form). */
export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
}

/** The keys whose values are int64 on the wire (Order's `id` and `petId`). */
export type Int64Keys = ReadonlySet<string>;

/** Nesting deeper than this is refused (an order is flat; this only bounds the recursion). */
const maxDepth = 64;
const numberPattern = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const integerPattern = /^-?(?:0|[1-9]\d*)$/;
const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

/** The one check of an int64 member's source text: a JSON integer within int64, as a bigint. */
export const int64Value = (key: string, source: string): bigint => {
  if (integerPattern.test(source)) {
    const value = BigInt(source);
    if (value >= int64Min && value <= int64Max) return value;
  }
  throw new JsonSyntaxError(`"${key}" must be a JSON integer within int64, got ${source.length > 40 ? `${source.slice(0, 40)}…` : source}`);
};

type Parsed = { value: unknown; end: number };

/** Reads JSON values out of `text` (the exact, slower path). */
class ValueReader {
  readonly text: string;
  readonly int64Keys: Int64Keys;

  constructor(text: string, int64Keys: Int64Keys) {
    this.text = text;
    this.int64Keys = int64Keys;
  }

  fail(message: string, at: number): never {
    throw new JsonSyntaxError(`${message} at offset ${at}`);
  }

  /** The index of the first non-whitespace character at or after `at` (text.length if none). */
  skipSpace(at: number): number {
    let i = at;
    while (i < this.text.length && isSpace(this.text.charCodeAt(i))) i++;
    return i;
  }

  next(at: number): number {
    const i = this.skipSpace(at);
    if (i >= this.text.length) this.fail('Unexpected end of JSON', i);
    return i;
  }

  value(at: number, depth: number, int64Key?: string): Parsed {
    const i = this.next(at);
    const c = this.text.charCodeAt(i);
    if (int64Key !== undefined) return this.int64(i, int64Key);
    if (c === 0x22) return this.string(i);
    if (c === 0x7b) return this.object(i, depth + 1);
    if (c === 0x5b) return this.array(i, depth + 1);
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const end = numberEnd(this.text, i);
      const source = this.text.slice(i, end);
      if (!numberPattern.test(source)) this.fail(`Invalid number ${source}`, i);
      return { value: Number(source), end };
    }
    return this.literal(i);
  }

  /** An int64 member's value: its source text (up to the next delimiter) checked by `int64Value`. */
  int64(at: number, key: string): Parsed {
    let end = at;
    while (end < this.text.length && !isDelimiter(this.text.charCodeAt(end))) end++;
    // A string is refused whole, even one holding a comma.
    if (this.text.charCodeAt(at) === 0x22) end = this.string(at).end;
    return { value: int64Value(key, this.text.slice(at, end)), end };
  }

  string(at: number): Parsed {
    const { text } = this;
    const close = closingQuote(text, at + 1);
    if (close < 0) this.fail('Unterminated string', at);
    // JSON.parse refuses a raw control character in a string; so does this parser.
    for (let i = at + 1; i < close; i++) if (text.charCodeAt(i) < 0x20) this.fail('Control character in a string', i);
    if (text.indexOf('\\', at + 1) < 0 || text.indexOf('\\', at + 1) > close) return { value: text.slice(at + 1, close), end: close + 1 };
    // Escapes: let JSON.parse decode the string (exactly as JSON says).
    try {
      return { value: JSON.parse(text.slice(at, close + 1)) as string, end: close + 1 };
    } catch {
      return this.fail('Invalid string escape', at);
    }
  }

  literal(at: number): Parsed {
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const)
      if (this.text.startsWith(word, at)) return { value, end: at + word.length };
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
      const member = this.value(i + 1, depth, this.int64Keys.has(name) ? name : undefined);
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
      const element = this.value(i, depth);
      result.push(element.value);
      i = this.next(element.end);
      const c = this.text.charCodeAt(i);
      if (c === 0x5d) return { value: result, end: i + 1 };
      if (c !== 0x2c) this.fail('Expected "," or "]"', i);
      i += 1;
    }
  }
}

/** Parses a whole JSON text exactly: every member named in `int64Keys`, at any depth, becomes a bigint (or is refused). */
export const parseJsonExact = (text: string, int64Keys: Int64Keys): unknown => {
  const reader = new ValueReader(text, int64Keys);
  const { value, end } = reader.value(0, 0);
  const rest = reader.skipSpace(end);
  if (rest !== text.length) reader.fail('Unexpected text after JSON', rest);
  return value;
};

export const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
/** What ends a value's text: whitespace, ",", "}", "]". */
const isDelimiter = (c: number) => isSpace(c) || c === 0x2c || c === 0x7d || c === 0x5d;
/** Digits, ".", "e", "E", "+", "-": the characters a number is made of. */
const isNumberChar = (c: number) => (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;

const numberEnd = (text: string, at: number): number => {
  let end = at + 1;
  while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
  return end;
};

/** The index of the quote that closes a string whose content starts at `from` (-1: not in the text yet). */
export const closingQuote = (text: string, from: number): number => {
  for (let at = text.indexOf('"', from); at >= 0; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
};
