/**
 * The pre-traffic hook's checks of the v2 list (functions/pre-traffic-hook.ts): its first page,
 * and a page filtered by status. The hook hands them a way to ask the new version for a page and
 * to describe the orders table; each check returns its PASS line's text or throws its FAIL reason.
 */
import { type Answer, expectError, fail } from './smoke-check.ts';
import { orderSchema } from './schemas.ts';
import { statusIndexQueryable } from './status-index.ts';

/**
 * One v2 page from the new version, with these query parameters. `unavailable: 'answer'` hands a
 * 503 back instead of waiting it out as the service being busy.
 */
export type AskPage = (query: Readonly<Record<string, string>>, options?: { unavailable: 'wait' | 'answer' }) => Promise<Answer>;

/** The orders table as DynamoDB's DescribeTable describes it (its indexes' status). */
export type DescribeOrders = () => Promise<Parameters<typeof statusIndexQueryable>[0]>;

type Check = { readonly name: string; readonly run: () => Promise<string> };

/** The orders of a 200 page: valid Orders (numbers read as their exact text), or a failure. */
const pageOrders = (answer: Answer): Record<string, unknown>[] => {
  if (answer.status !== 200) fail(`answered ${answer.status}: ${answer.body.slice(0, 200)}`);
  const exact = (_key: string, value: unknown, context?: { source?: string }) => (typeof value === 'number' ? context?.source : value);
  const { orders } = JSON.parse(answer.body, exact as (key: string, value: unknown) => unknown) as { orders?: unknown };
  if (!Array.isArray(orders)) return fail('answered 200 without an orders array');
  const invalid = orders.findIndex((entry) => !orderSchema.safeParse(entry).success);
  if (invalid >= 0) fail(`order ${invalid} is not a valid Order: ${JSON.stringify(orders[invalid]).slice(0, 200)}`);
  return orders as Record<string, unknown>[];
};

/** A 200 page of pending orders only, or a failure. */
const pendingPage = (answer: Answer): string => {
  const orders = pageOrders(answer);
  const other = orders.find((order) => order.status !== 'pending');
  if (other !== undefined) fail(`listed an order whose status is not pending: ${JSON.stringify(other).slice(0, 200)}`);
  return `200, ${orders.length} pending orders on the first page`;
};

/** The v2 list's first page, no parameters. */
export const v2PageAnswers = (ask: AskPage): Check => ({
  name: 'v2 page',
  run: async () => `200, ${pageOrders(await ask({})).length} orders on the first page`,
});

/**
 * A page of pending orders: 200 with pending orders only once the status index is ACTIVE; before
 * that (a stage whose index is not deployed yet, or backfilling: docs/deploying.md#the-status-index),
 * the 503 service_unavailable with Retry-After that clients are promised instead of a 500.
 */
export const v2StatusPageAnswers = (ask: AskPage, describeOrders: DescribeOrders): Check => ({
  name: 'v2 page of pending orders',
  run: async () => {
    if (!statusIndexQueryable(await describeOrders())) {
      const answer = await ask({ status: 'pending' }, { unavailable: 'answer' });
      // The backfill may end between the two calls: a 200 then counts if the index is ready now.
      if (answer.status === 200 && statusIndexQueryable(await describeOrders())) return pendingPage(answer);
      const refused = expectError(answer, 503, 'service_unavailable');
      if (answer.headers.get('retry-after') === null) fail('answered 503 without Retry-After');
      return `the status index is not ready for Query: ${refused}`;
    }
    return pendingPage(await ask({ status: 'pending' }));
  },
});
