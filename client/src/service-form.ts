/**
 * The orders exactly as the service writes them, read in one pass without `JSON.parse`: a v2 page
 * `{"orders":[…],"nextCursor":"…"}` or an array `[…]` of orders, each order
 * `{"id":…,"petId":…,"quantity":…,"shipDate":"…","complete":…,"status":"…"}` with `id` first and
 * any other member left out, no whitespace. Every member's text is checked as it is read (an id
 * is a JSON integer within int64, json.ts's rule), so what this reader returns is what
 * `parseJsonExact` returns for the same text, property order included. At the first character
 * that is not that form it returns undefined, and orders-json.ts reads the text the general way.
 */
import { closingQuote } from './json.ts';

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

/** Up to 15 digits a double holds an integer exactly; int64's ends have 19. */
const exactDigits = 15;
const int64Digits = 19;

/** A V8 string slice shorter than this is a copy; a longer one is a view that keeps the whole page alive. */
const copiedSliceLength = 13;
/** How many distinct short strings a page keeps one copy of: the statuses in use are a handful. */
const maxSeen = 8;

class FormReader {
  readonly text: string;
  at = 0;
  /** The statuses read so far on this page. */
  readonly seen: string[] = [];

  constructor(text: string) {
    this.text = text;
  }

  /** Steps over `word` if the text has it here. */
  literal(word: string): boolean {
    if (!this.text.startsWith(word, this.at)) return false;
    this.at += word.length;
    return true;
  }

  /** The digits of a JSON integer (optional "-", no leading zero, no fraction or exponent) from here: their end, or -1. */
  integerEnd(): number {
    const { text } = this;
    let i = this.at;
    let c = text.charCodeAt(i);
    if (c === 0x2d) c = text.charCodeAt(++i);
    const first = i;
    while (c >= 0x30 && c <= 0x39) c = text.charCodeAt(++i);
    const digits = i - first;
    if (digits === 0 || (digits > 1 && text.charCodeAt(first) === 0x30) || c === 0x2e || c === 0x65 || c === 0x45) return -1;
    return i;
  }

  /** How many digits the integer from here to `end` has (its "-" not counted). */
  digitsTo(end: number): number {
    return end - this.at - (this.text.charCodeAt(this.at) === 0x2d ? 1 : 0);
  }

  /** The integer from here to `end` as a double (exact up to 15 digits), -0 as JSON.parse reads it; steps over it. */
  valueTo(end: number): number {
    const { text } = this;
    const negative = text.charCodeAt(this.at) === 0x2d;
    let value = 0;
    for (let i = negative ? this.at + 1 : this.at; i < end; i++) value = value * 10 + text.charCodeAt(i) - 0x30;
    this.at = end;
    return negative ? -value : value;
  }

  /** A JSON integer of up to 15 digits, or undefined. */
  smallInteger(): number | undefined {
    const end = this.integerEnd();
    return end < 0 || this.digitsTo(end) > exactDigits ? undefined : this.valueTo(end);
  }

  /** An int64 member's value: a JSON integer within int64 as a bigint, or undefined. */
  int64(): bigint | undefined {
    const end = this.integerEnd();
    if (end < 0) return undefined;
    const digits = this.digitsTo(end);
    if (digits <= exactDigits) return BigInt(this.valueTo(end));
    if (digits > int64Digits) return undefined;
    const value = BigInt(this.text.slice(this.at, end));
    if (digits === int64Digits && (value < int64Min || value > int64Max)) return undefined;
    this.at = end;
    return value;
  }

  /** A JSON string starting here, as JSON.parse reads it, or undefined (a control character, a bad escape). */
  string(): string | undefined {
    const { text } = this;
    const open = this.at;
    if (text.charCodeAt(open) !== 0x22) return undefined;
    const close = text.indexOf('"', open + 1);
    if (close < 0) return undefined;
    for (let i = open + 1; i < close; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20) return undefined;
      if (c === 0x5c) return this.escapedString(open);
    }
    this.at = close + 1;
    return copyOf(text, open + 1, close);
  }

  /**
   * The status, a string: one copy of each value on the page (JSON.parse also keeps one copy of a
   * short string), the first time read as any string.
   */
  status(): string | undefined {
    const { text, seen } = this;
    for (let s = 0; s < seen.length; s++) {
      const value = seen[s]!;
      const close = this.at + 1 + value.length;
      if (text.charCodeAt(close) === 0x22 && text.startsWith(value, this.at + 1) && text.charCodeAt(this.at) === 0x22) {
        this.at = close + 1;
        return value;
      }
    }
    const open = this.at;
    const value = this.string();
    // Only a value read as written (no escape: its text is one character longer at each end) may match text later.
    if (value !== undefined && value.length === this.at - open - 2 && value.length < copiedSliceLength && seen.length < maxSeen)
      seen.push(value);
    return value;
  }

  /** A string with escapes: JSON.parse decodes it exactly (and refuses a bad one). */
  escapedString(open: number): string | undefined {
    const close = closingQuote(this.text, open + 1);
    if (close < 0) return undefined;
    try {
      const value = JSON.parse(this.text.slice(open, close + 1)) as string;
      this.at = close + 1;
      return value;
    } catch {
      return undefined;
    }
  }

  boolean(): boolean | undefined {
    if (this.literal('true')) return true;
    if (this.literal('false')) return false;
    return undefined;
  }

  /** `[` orders `]`, or undefined. */
  orders(): unknown[] | undefined {
    if (!this.literal('[')) return undefined;
    const orders: unknown[] = [];
    if (this.literal(']')) return orders;
    do {
      const order = this.order();
      if (order === undefined) return undefined;
      orders.push(order);
    } while (this.literal(','));
    return this.literal(']') ? orders : undefined;
  }

  /** One order in the service's form, or undefined. */
  order(): object | undefined {
    if (!this.literal('{"id":')) return undefined;
    const id = this.int64();
    // Each optional member is absent (undefined) or read; null means it is there but not in the form.
    const petId = this.literal(',"petId":') ? (this.int64() ?? null) : undefined;
    const quantity = this.literal(',"quantity":') ? (this.smallInteger() ?? null) : undefined;
    const shipDate = this.literal(',"shipDate":') ? (this.string() ?? null) : undefined;
    const complete = this.literal(',"complete":') ? (this.boolean() ?? null) : undefined;
    const status = this.literal(',"status":') ? (this.status() ?? null) : undefined;
    if (id === undefined || petId === null || quantity === null || shipDate === null || complete === null || status === null)
      return undefined;
    if (!this.literal('}')) return undefined;
    // All six (the usual order) in one literal: its object holds them in place, as JSON.parse's does.
    if (petId !== undefined && quantity !== undefined && shipDate !== undefined && complete !== undefined && status !== undefined)
      return { id, petId, quantity, shipDate, complete, status };
    const order: Record<string, unknown> = { id };
    if (petId !== undefined) order.petId = petId;
    if (quantity !== undefined) order.quantity = quantity;
    if (shipDate !== undefined) order.shipDate = shipDate;
    if (complete !== undefined) order.complete = complete;
    if (status !== undefined) order.status = status;
    return order;
  }

  /** `{"orders":[…]}` with an optional `,"nextCursor":"…"`, or undefined. */
  page(): object | undefined {
    if (!this.literal('{"orders":')) return undefined;
    const orders = this.orders();
    const nextCursor = this.literal(',"nextCursor":') ? (this.string() ?? null) : undefined;
    if (orders === undefined || nextCursor === null || !this.literal('}')) return undefined;
    return nextCursor === undefined ? { orders } : { orders, nextCursor };
  }
}

/**
 * `text.slice(from, to)` as a string of its own: joined from pieces short enough that V8 copies
 * them, so that an order kept does not keep its page's text alive (a longer slice is a view of it).
 */
const copyOf = (text: string, from: number, to: number): string => {
  let copy = '';
  for (let at = from; at < to; at += copiedSliceLength - 1) copy += text.slice(at, Math.min(to, at + copiedSliceLength - 1));
  return copy;
};

/** The value of `text` when it is a page or an array of orders in the service's own form; undefined otherwise. */
export const readServiceForm = (text: string): unknown => {
  const reader = new FormReader(text);
  const value = text.charCodeAt(0) === 0x5b ? reader.orders() : reader.page();
  return reader.at === text.length ? value : undefined;
};
