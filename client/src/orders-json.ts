/**
 * The orders of a v2 page, or of a batch of the v1 stream, parsed fast and exactly, by the first
 * of three readers that can vouch for the text:
 * 1. service-form.ts reads the text as the service writes it (one pass, every member checked);
 * 2. otherwise one `indexOf` pass finds every `id` and `petId` member and checks its text (a JSON
 *    integer, json.ts's rule), `JSON.parse` reads the whole text, and the orders' members become
 *    bigint (from their text when past 15 digits, where a double may have rounded them);
 * 3. anything unusual (an escape sequence that could spell a key, a member nested in an order or
 *    duplicated, a value not in the int64 form) goes to `parseJsonExact`, which applies the same
 *    rule exactly and says what is wrong.
 */
import { type Int64Keys, JsonSyntaxError, int64Value, isSpace, parseJsonExact } from './json.ts';
import { readServiceForm } from './service-form.ts';

/** The int64 keys the fast path knows: the Order's, `id` and `petId` (both end in "d"). */
const orderKeys = ['id', 'petId'] as const;
const isOrderKeys = (keys: Int64Keys) => keys.size === orderKeys.length && orderKeys.every((key) => keys.has(key));

/** One key's members as the scan found them: how many, and those past 15 digits (where a double may round) with their ordinal and text. */
type KeyMembers = { count: number; long: { ordinal: number; text: string }[] };
type Members = [id: KeyMembers, petId: KeyMembers];

/**
 * Every `id` and `petId` member of `text`, each value's text checked; undefined when the fast
 * path cannot vouch for the text (an escape that could spell a key, a value not in the int64
 * form: the exact parser then says what is wrong). One `indexOf` pass for `d"`, the end of both keys.
 */
const scanMembers = (text: string): Members | undefined => {
  if (text.includes('\\u')) return undefined;
  const found: Members = [
    { count: 0, long: [] },
    { count: 0, long: [] },
  ];
  for (let at = text.indexOf('d"'); at >= 0; at = text.indexOf('d"', at + 2)) {
    let key = keyEndingAt(text, at);
    let from = at + 2;
    while (key >= 0) {
      const end = readInteger(text, from, found[key]!);
      if (end === -2) return undefined;
      if (end === -1) break;
      at = end - 2;
      // The service writes petId right after id: read it here rather than search for it.
      key = key === 0 && text.startsWith(',"petId"', end) ? 1 : -1;
      from = end + 8;
    }
  }
  return found;
};

/** 0 when `"id"` ends at `at` (its "d"), 1 for `"petId"`, -1 otherwise; a key's opening quote is never escaped. */
const keyEndingAt = (text: string, at: number): number => {
  const before = text.charCodeAt(at - 1);
  if (before === 0x69) return text.charCodeAt(at - 2) === 0x22 && text.charCodeAt(at - 3) !== 0x5c ? 0 : -1;
  if (before !== 0x49) return -1;
  return text.charCodeAt(at - 5) === 0x22 && text.startsWith('pet', at - 4) && text.charCodeAt(at - 6) !== 0x5c ? 1 : -1;
};

/** After a key's closing quote: -1 when no ":" follows (not a key), -2 when its value is not a JSON integer, else the value's end. */
const readInteger = (text: string, from: number, found: KeyMembers): number => {
  let i = from;
  let c = text.charCodeAt(i);
  while (isSpace(c)) c = text.charCodeAt(++i);
  if (c !== 0x3a) return -1;
  c = text.charCodeAt(++i);
  while (isSpace(c)) c = text.charCodeAt(++i);
  const start = i;
  if (c === 0x2d) c = text.charCodeAt(++i);
  const first = i;
  while (c >= 0x30 && c <= 0x39) c = text.charCodeAt(++i);
  const digits = i - first;
  if (digits === 0 || (digits > 1 && text.charCodeAt(first) === 0x30) || c === 0x2e || c === 0x65 || c === 0x45) return -2;
  // Up to 15 digits a double holds the integer exactly; past that, keep its text.
  if (digits > 15) found.long.push({ ordinal: found.count, text: text.slice(start, i) });
  found.count++;
  return i;
};

/**
 * The `id` and `petId` of `orders` (from `JSON.parse`'s result) made bigint, in place; false when
 * they are not exactly the members the scan found (nested, duplicated, or read by `JSON.parse`
 * from text the scan did not see).
 */
const convertMembers = (orders: unknown[], found: Members): boolean => {
  const ids = new Conversion('id', found[0]);
  const petIds = new Conversion('petId', found[1]);
  for (let o = 0; o < orders.length; o++) {
    const order = orders[o] as { id?: unknown; petId?: unknown } | null;
    if (typeof order !== 'object' || order === null) continue;
    // A member that is not a number ends the fast path (the value is then dropped for the exact parser's).
    if (order.id !== undefined && (order.id = ids.next(order.id)) === undefined) return false;
    if (order.petId !== undefined && (order.petId = petIds.next(order.petId)) === undefined) return false;
  }
  return ids.seen === found[0].count && petIds.seen === found[1].count;
};

/** One key's members in `JSON.parse`'s result, in order: the n-th is the n-th the scan found. */
class Conversion {
  readonly key: string;
  readonly found: KeyMembers;
  seen = 0;
  #long = 0;

  constructor(key: string, found: KeyMembers) {
    this.key = key;
    this.found = found;
  }

  /** The next member's bigint: from its text when the scan kept it (past 15 digits), else from the double; undefined if not a number. */
  next(value: unknown): bigint | undefined {
    if (typeof value !== 'number') return undefined;
    const long = this.found.long[this.#long];
    if (long?.ordinal !== this.seen++) return BigInt(value);
    this.#long++;
    return int64Value(this.key, long.text);
  }
}

/**
 * Parses JSON whose orders are `ordersOf(value)`, every int64 member exact: fastest in the
 * service's own form, fast when the int64 members are the orders' own `id` and `petId`, exact in
 * every case.
 */
export const parseOrdersJson = (text: string, int64Keys: Int64Keys, ordersOf: (value: unknown) => unknown): unknown => {
  if (!isOrderKeys(int64Keys)) return parseJsonExact(text, int64Keys);
  const served = readServiceForm(text);
  if (served !== undefined) return served;
  const members = scanMembers(text);
  if (members !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new JsonSyntaxError((error as Error).message);
    }
    const orders = ordersOf(value);
    if (Array.isArray(orders) && convertMembers(orders, members)) return value;
  }
  return parseJsonExact(text, int64Keys);
};
