/**
 * The pre-traffic hook's checks of the v2 list (functions/pre-traffic-hook/handler.ts): a first page and,
 * through its cursor, the next; and a page filtered by status. The hook hands them a way to ask the
 * new version for a page and to describe the orders table; each check returns its PASS line's text
 * or throws its FAIL reason.
 */
import { type Answer, expectError, fail, pageOf } from '../../shared/answers.ts';
import { indexNotReadyMessage, statusIndexQueryable } from '../../shared/status-index.ts';
import { busyAnswer } from './invocations.ts';

/**
 * One v2 page from the new version, with these query parameters; `busyOf` tells a busy answer
 * (waited out) from one the check judges (default: ./invocations.ts busyAnswer).
 */
export type AskPage = (query: Readonly<Record<string, string>>, busyOf?: (answer: Answer) => string | undefined) => Promise<Answer>;

/** A 503 handed back to the check, instead of waited out as the service being busy. */
const answered503 = (answer: Answer) => (answer.status === 503 ? undefined : busyAnswer(answer));

/** Whether an answer is the 503 a status-filtered page gives while the index is not ready. */
const isIndexNotReadyAnswer = (answer: Answer) => {
  if (answer.status !== 503) return false;
  try {
    return (JSON.parse(answer.body) as { message?: unknown }).message === indexNotReadyMessage;
  } catch {
    return false;
  }
};

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
 * A page of pending orders: 200 with pending orders only once the status index is ACTIVE (or
 * UPDATING), where its 503 "not ready" is wrong (a version that names an index the table does not
 * have); before that (a stage whose index is not deployed yet, or backfilling:
 * docs/reference/stages.md#the-status-index), the 503 service_unavailable with Retry-After that clients are
 * promised instead of a 500.
 */
export const v2StatusPageAnswers = (ask: AskPage, describeOrders: DescribeOrders): Check => ({
  name: 'v2 page of pending orders',
  run: async () => {
    if (!statusIndexQueryable(await describeOrders())) {
      const answer = await ask({ status: 'pending' }, answered503);
      // The backfill may end between the two calls: a 200 then counts if the index is ready now.
      if (answer.status === 200 && statusIndexQueryable(await describeOrders())) return pendingPage(answer);
      const refused = expectError(answer, 503, 'service_unavailable');
      if (answer.headers.get('retry-after') === null) fail('answered 503 without Retry-After');
      return `the status index is not ready for Query: ${refused}`;
    }
    const notReadyWhileActive = (answer: Answer) => {
      if (isIndexNotReadyAnswer(answer))
        fail(
          `DescribeTable says the status index is ready, yet the page answered the 503 of an index not ready: ${answer.body.slice(0, 200)}`,
        );
      return busyAnswer(answer);
    };
    return pendingPage(await ask({ status: 'pending' }, notReadyWhileActive));
  },
});
