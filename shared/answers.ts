/**
 * An HTTP answer as a probe sees it, and how it is judged: the verdicts a check can give (a
 * failure, the service busy, a check that could not be set up or does not apply), Error records,
 * and lists and pages of Orders read with every integer exact. The known-answer suite
 * (./known-answers.ts) judges every runner's answers with these: the smoke check's and the
 * synthetic client's over HTTP, the pre-traffic hook's from the functions it invokes.
 */
import { z } from 'zod';
import { integerPattern, orderSchema } from './schemas.ts';

/** An HTTP answer as a client sees it; the pre-traffic hook builds one from a function's own answer. */
export type Answer = { status: number; headers: Headers; body: string; firstByteMs: number; cut?: boolean };

/** A check's failure: a wrong answer, or an error no document promises. */
export const fail = (message: string): never => {
  throw new Error(message);
};

/**
 * A check that found the service busy until its time ran out: a documented refusal (429, or 503 with
 * `Retry-After`: full list slots, a status index still backfilling, DynamoDB throttling) or Lambda
 * refusing the invocation for want of concurrency. Reported apart (BUSY, ProbeBusy), never as a
 * failure: being busy is judged against capacity, not against a release.
 */
export class ServiceBusy extends Error {
  override readonly name = 'ServiceBusy';
}

/**
 * A check the prober could not set up: its key unreadable, its own probe order refused (IAM,
 * throttling). Not the release's answer: the synthetic client reports it apart (SETUP,
 * CanarySetupFailed) and its run does not fail for it; the pre-traffic hook, a gate, fails closed.
 */
export class SetupFailed extends Error {
  override readonly name = 'SetupFailed';
}

/** A check that does not apply to this runner or stage (SKIP, with why): it proves nothing and fails nothing. */
export class Skipped extends Error {
  override readonly name = 'Skipped';
}

/** The answer's X-Request-Id (every answer carries one), or a failure. */
export const requestIdOf = (answer: Answer) => answer.headers.get('x-request-id') || fail('no X-Request-Id header');

/** An integer as it stood in the JSON text, digit for digit (exactJson). */
class ExactInteger {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/**
 * Marks every integer of a JSON text outside its strings, so that JSON.parse keeps it as text
 * (Node.js 20 has no reviver source text). A string holding U+0000 is refused: the mark could
 * otherwise be forged by a string.
 */
const markIntegers = (text: string): string => {
  let out = '';
  let copied = 0;
  for (let at = 0; at < text.length;) {
    const char = text[at]!;
    if (char === '"') {
      let end = at + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (/\\u0000/i.test(text.slice(at, end))) fail('a JSON string holds U+0000');
      at = end + 1;
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      let end = at + 1;
      while (end < text.length && /[0-9eE+.-]/.test(text[end]!)) end += 1;
      const token = text.slice(at, end);
      if (integerPattern.test(token)) {
        out += `${text.slice(copied, at)}"\\u0000${token}"`;
        copied = end;
      }
      at = end;
    } else at += 1;
  }
  return out + text.slice(copied);
};

/** JSON with every integer kept as its exact text (an ExactInteger), or a failure quoting the text. */
const exactJson = (text: string): unknown => {
  let marked: string;
  try {
    marked = markIntegers(text);
    return JSON.parse(marked, (_key, value: unknown) =>
      typeof value === 'string' && value.startsWith('\u0000') ? new ExactInteger(value.slice(1)) : value,
    );
  } catch {
    return fail(`expected JSON, got ${text.slice(0, 200)}`);
  }
};

const errorRecord = z.strictObject({ code: z.string(), message: z.string(), status: z.number() });

/** The answer is the Error record `code` with status `status`, or a failure. */
export const expectError = (answer: Answer, status: number, code: string) => {
  if (answer.status !== status) fail(`expected ${status} ${code}, got ${answer.status}: ${answer.body.slice(0, 200)}`);
  let record: unknown;
  try {
    record = JSON.parse(answer.body);
  } catch {
    fail(`expected an Error record, got ${answer.body.slice(0, 200)}`);
  }
  const parsed = errorRecord.safeParse(record);
  if (!parsed.success || parsed.data.code !== code || parsed.data.status !== status)
    fail(`expected the Error record {code: ${code}, status: ${status}}, got ${answer.body.slice(0, 200)}`);
  return `${status} ${code}, X-Request-Id ${requestIdOf(answer)}`;
};

/** The answer is `status` with an empty body (a 204), or a failure. */
export const expectEmpty = (answer: Answer, status: number) => {
  if (answer.status !== status) fail(`expected ${status}, got ${answer.status}: ${answer.body.slice(0, 200)}`);
  if (answer.body !== '') fail(`expected no body with ${status}, got ${answer.body.slice(0, 200)}`);
  return `${status}, X-Request-Id ${requestIdOf(answer)}`;
};

/** An Order as the wire has it (integers as their text, int64 fields never from a JSON string), other fields as they are. */
const orderOf = (entry: unknown): unknown => {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return entry;
  const fields = Object.entries(entry as Record<string, unknown>).map(([key, value]) => {
    const integer = value instanceof ExactInteger ? value.text : undefined;
    // id, petId and quantity are JSON integers: the same digits as a JSON string are not.
    if (key === 'id' || key === 'petId' || key === 'quantity') return [key, integer ?? null];
    return [key, integer === undefined ? value : Number(integer)];
  });
  return Object.fromEntries(fields);
};

/** Every entry is a valid Order (integers as their exact text), or a failure naming the first that is not. */
const validOrders = (entries: unknown[]): Record<string, unknown>[] => {
  const orders = entries.map(orderOf);
  const invalid = orders.findIndex((entry) => !orderSchema.safeParse(entry).success);
  if (invalid >= 0) fail(`order ${invalid} is not a valid Order: ${JSON.stringify(orders[invalid]).slice(0, 200)}`);
  return orders as Record<string, unknown>[];
};

/**
 * The text of a JSON array's complete elements, closed: for an answer cut by its reader, the orders
 * that arrived whole. Elements are found by nesting depth outside strings.
 */
const completeElements = (text: string): string => {
  let depth = 0;
  let lastEnd = -1;
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!;
    if (char === '"') {
      at += 1;
      while (at < text.length && text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    } else if (char === '[' || char === '{') depth += 1;
    else if (char === ']' || char === '}') {
      depth -= 1;
      if (depth === 1 && char === '}') lastEnd = at + 1;
      if (depth === 0) return text.slice(0, at + 1);
    }
  }
  return lastEnd < 0 ? '[]' : `${text.slice(0, lastEnd)}]`;
};

/**
 * The orders of a v1 list answer: status 200 and a JSON array of valid Orders (integers kept
 * exact), or a failure. An answer its reader cut (`cut`) is read up to its last whole order.
 */
export const listedOrders = (answer: Answer): Record<string, unknown>[] => {
  if (answer.status !== 200) fail(`expected 200, got ${answer.status}: ${answer.body.slice(0, 200)}`);
  const orders = exactJson(answer.cut ? completeElements(answer.body) : answer.body);
  if (!Array.isArray(orders)) fail(`expected a JSON array, got ${answer.body.slice(0, 200)}`);
  return validOrders(orders as unknown[]);
};

/** A v2 page: status 200, valid Orders and its `nextCursor` (absent on the last page), or a failure. */
export const pageOf = (answer: Answer): { orders: Record<string, unknown>[]; nextCursor: string | undefined } => {
  if (answer.status !== 200) fail(`expected 200, got ${answer.status}: ${answer.body.slice(0, 200)}`);
  const page = exactJson(answer.body) as { orders?: unknown; nextCursor?: unknown } | null;
  if (typeof page !== 'object' || page === null || !Array.isArray(page.orders))
    return fail(`answered 200 without an orders array: ${answer.body.slice(0, 200)}`);
  if (page.nextCursor !== undefined && typeof page.nextCursor !== 'string')
    fail(`nextCursor is not a string: ${answer.body.slice(0, 200)}`);
  return { orders: validOrders(page.orders), nextCursor: page.nextCursor as string | undefined };
};

/** The first order id listed twice, or undefined: a list or a read of pages names each order once. */
export const repeatedId = (orders: readonly Record<string, unknown>[]): string | undefined => {
  const seen = new Set<unknown>();
  for (const { id } of orders) {
    if (seen.has(id)) return String(id);
    seen.add(id);
  }
  return undefined;
};
