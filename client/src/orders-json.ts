/**
 * The orders of a v2 page, or of a batch of the v1 stream, parsed fast and exactly: one `indexOf`
 * pass finds every `id` and `petId` member and checks its text (a JSON integer, json.ts's rule),
 * `JSON.parse` reads the whole text, and the orders' members become bigint (from their text when
 * past 15 digits, where a double may have rounded them). Anything unusual (an escape sequence that
 * could spell a key, a member nested in an order or duplicated, a value not in the int64 form)
 * falls back to `parseJsonExact`, which applies the same rule exactly and says what is wrong.
 */
import { type Int64Keys, JsonSyntaxError, int64Value, isSpace, parseJsonExact } from './json.ts';

/** The int64 keys the fast path knows: the Order's, `id` and `petId` (both end in "d"). */
const orderKeys = ['id', 'petId'] as const;
const isOrderKeys = (keys: Int64Keys) => keys.size === orderKeys.length && orderKeys.every((key) => keys.has(key));

/**
 * What the scan found: how many `id` and `petId` members, and those past 15 digits (where a
 * double may round) as [key (0 id, 1 petId), ordinal among that key's members, text] triples.
 */
type Members = { ids: number; petIds: number; long: (number | string)[] };

/**
 * Every `id` and `petId` member of `text`, each value's text checked; undefined when the fast
 * path cannot vouch for the text (an escape that could spell a key, a value not in the int64
 * form: the exact parser then says what is wrong). One `indexOf` pass for `d"`, the end of both keys.
 */
const scanMembers = (text: string): Members | undefined => {
  if (text.includes('\\u')) return undefined;
  const found: Members = { ids: 0, petIds: 0, long: [] };
  for (let at = text.indexOf('d"'); at >= 0; at = text.indexOf('d"', at + 2)) {
    let key = keyEndingAt(text, at);
    let from = at + 2;
    while (key >= 0) {
      const end = readInteger(text, from, key, found);
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
const readInteger = (text: string, from: number, key: number, found: Members): number => {
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
  if (digits > 15) found.long.push(key, key === 0 ? found.ids : found.petIds, text.slice(start, i));
  if (key === 0) found.ids++;
  else found.petIds++;
  return i;
};

/**
 * The `id` and `petId` of `orders` (from `JSON.parse`'s result) made bigint, in place; false when
 * they are not exactly the members the scan found (nested, duplicated, or read by `JSON.parse`
 * from text the scan did not see).
 */
const convertMembers = (orders: unknown[], found: Members): boolean => {
  let ids = 0;
  let petIds = 0;
  for (let o = 0; o < orders.length; o++) {
    const order = orders[o] as { id?: unknown; petId?: unknown } | null;
    if (typeof order !== 'object' || order === null) continue;
    const { id, petId } = order;
    if (id !== undefined) {
      if (typeof id !== 'number') return false;
      order.id = BigInt(id);
      ids++;
    }
    if (petId !== undefined) {
      if (typeof petId !== 'number') return false;
      order.petId = BigInt(petId);
      petIds++;
    }
  }
  return ids === found.ids && petIds === found.petIds && (found.long.length === 0 || convertLong(orders, found.long));
};

/** The members past 15 digits, from their text: the n-th member of a key belongs to the n-th order that has that key. */
const convertLong = (orders: unknown[], long: (number | string)[]): boolean => {
  for (let l = 0; l < long.length; l += 3) {
    const key = orderKeys[long[l] as number]!;
    let ordinal = long[l + 1] as number;
    const order = orders.find((candidate) => (candidate as Record<string, unknown> | null)?.[key] !== undefined && ordinal-- === 0);
    if (order === undefined) return false;
    (order as Record<string, unknown>)[key] = int64Value(key, long[l + 2] as string);
  }
  return true;
};

/**
 * Parses JSON whose orders are `ordersOf(value)`, every int64 member exact: fast when the int64
 * members are the orders' own `id` and `petId` (as the service writes them), exact in every case.
 */
export const parseOrdersJson = (text: string, int64Keys: Int64Keys, ordersOf: (value: unknown) => unknown): unknown => {
  const members = isOrderKeys(int64Keys) ? scanMembers(text) : undefined;
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
