/**
 * An HTTP answer as a probe sees it, and how it is judged: the verdicts a check can give (a
 * failure, or the service busy), Error records, and lists and pages of Orders read with every
 * integer exact. The smoke check (./smoke-check.ts) judges the answers the API's client does not
 * read itself with these; the pre-traffic hook (functions/pre-traffic-hook/handler.ts), the answers of the
 * new versions it invokes.
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

/** The prober could not set itself up (its key, its probe order): nothing was asked of the service, nothing failed there. */
export class ProbeSetupFailed extends Error {
  override readonly name = 'ProbeSetupFailed';
}

/** The answer's X-Request-Id (every answer carries one), or a failure. */
export const requestIdOf = (answer: Answer) => answer.headers.get('x-request-id') || fail('no X-Request-Id header');

/** Whether JSON.parse hands a reviver each value's source text (Node.js 22 and later; not 20). */
const sourceTextAccess = JSON.parse('1', (_key, value: unknown, context?: { source?: string }) => context?.source === '1' || value);

/** JSON with every integer kept as its exact text, so int64 ids are checked digit for digit. */
const parseExact = (text: string): unknown => {
  // Without it ids above 2^53 would be rounded and every such order reported invalid: say why instead.
  if (sourceTextAccess !== true)
    fail(`Node.js ${process.versions.node} cannot read JSON integers exactly (JSON.parse source text access needs Node.js 22 or later)`);
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined && integerPattern.test(context.source) ? context.source : value,
  );
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

/** Every entry is a valid Order (integers as their exact text), or a failure naming the first that is not. */
const validOrders = (orders: unknown[]): Record<string, unknown>[] => {
  const invalid = orders.findIndex((entry) => !orderSchema.safeParse(entry).success);
  if (invalid >= 0) fail(`order ${invalid} is not a valid Order: ${JSON.stringify(orders[invalid]).slice(0, 200)}`);
  return orders as Record<string, unknown>[];
};

/** The body read as exact JSON, or a failure quoting it. */
const exactJson = (answer: Answer): unknown => {
  try {
    return parseExact(answer.body);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('Node.js')) throw error;
    return fail(`expected JSON, got ${answer.body.slice(0, 200)}`);
  }
};

/** The orders of a v1 list answer: status 200 and a JSON array of valid Orders (ids kept exact), or a failure. */
export const listedOrders = (answer: Answer): Record<string, unknown>[] => {
  if (answer.status !== 200) fail(`expected 200, got ${answer.status}: ${answer.body.slice(0, 200)}`);
  const orders = exactJson(answer);
  if (!Array.isArray(orders)) fail(`expected a JSON array, got ${answer.body.slice(0, 200)}`);
  return validOrders(orders as unknown[]);
};

/** A v2 page: status 200, valid Orders and its `nextCursor` (absent on the last page), or a failure. */
export const pageOf = (answer: Answer): { orders: Record<string, unknown>[]; nextCursor: string | undefined } => {
  if (answer.status !== 200) fail(`expected 200, got ${answer.status}: ${answer.body.slice(0, 200)}`);
  const page = exactJson(answer) as { orders?: unknown; nextCursor?: unknown } | null;
  if (!Array.isArray(page?.orders)) return fail(`answered 200 without an orders array: ${answer.body.slice(0, 200)}`);
  if (page.nextCursor !== undefined && typeof page.nextCursor !== 'string')
    fail(`nextCursor is not a string: ${answer.body.slice(0, 200)}`);
  return { orders: validOrders(page.orders), nextCursor: page.nextCursor as string | undefined };
};
