/**
 * The pre-traffic hook's checks of the v2 list (functions/pre-traffic-hook/handler.ts): a first page and,
 * through its cursor, the next; and a page filtered by status. The hook hands them a way to ask the
 * new version for a page and to describe the orders table; each check returns its PASS line's text
 * or throws its FAIL reason.
 */
import { type Answer, expectError, fail, pageOf } from '../../shared/answers.ts';
import { statusIndexQueryable } from '../../shared/status-index.ts';

/**
 * One v2 page from the new version, with these query parameters. `unavailable: 'answer'` hands a
 * 503 back instead of waiting it out as the service being busy.
 */
export type AskPage = (query: Readonly<Record<string, string>>, options?: { unavailable: 'wait' | 'answer' }) => Promise<Answer>;

/** The orders table as DynamoDB's DescribeTable describes it (its indexes' status). */
export type DescribeOrders = () => Promise<Parameters<typeof statusIndexQueryable>[0]>;

type Check = { readonly name: string; readonly run: () => Promise<string> };

/** A 200 page of pending orders only, or a failure. */
const pendingPage = (answer: Answer): string => {
  const { orders } = pageOf(answer);
  const other = orders.find((order) => order.status !== 'pending');
  if (other !== undefined) fail(`listed an order whose status is not pending: ${JSON.stringify(other).slice(0, 200)}`);
  return `200, ${orders.length} pending orders on the first page`;
};

/**
 * The v2 list's first page of one order, and the next through its cursor: 200 both. `expectNext`:
 * the store holds at least one item (the hook's own probe order), so the first page must carry a
 * cursor, and a version whose second page answers 400 invalid_cursor fails here.
 */
export const v2PagesAnswer = (ask: AskPage, expectNext: boolean): Check => ({
  name: 'v2 first and second page',
  run: async () => {
    const first = pageOf(await ask({ pageSize: '1' }));
    if (first.nextCursor === undefined) {
      if (expectNext) fail('a page of one order from a store holding the probe order came without a nextCursor');
      return `200, ${first.orders.length} orders, the last page`;
    }
    const second = await ask({ pageSize: '1', cursor: first.nextCursor });
    if (second.status !== 200)
      fail(`the second page (through the first page's cursor) answered ${second.status}: ${second.body.slice(0, 200)}`);
    return `200, then 200 through its cursor: ${first.orders.length} and ${pageOf(second).orders.length} orders`;
  },
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
