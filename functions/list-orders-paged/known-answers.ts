/**
 * listOrdersPaged's known answers (shared/known-answers.ts), each a bounded read whatever the
 * store holds: pages of one through their cursors name distinct orders (a cursor that repeats a
 * page shows as an order listed again); a page filtered by status holds only orders of that
 * status, and one filtered to a one-second window of ship dates only orders shipped in it (a
 * filter that is ignored shows as any other order). What they cannot prove on a thin store is said
 * in their lines and in docs/deploying.md. The registry collects this suite; the handler never imports it.
 */
import { type Answer, expectError, fail, pageOf } from '../../shared/answers.ts';
import { type KnownAnswer, pathOf, type Prober, type ProbeRequest, skip, type Suite } from '../../shared/known-answers.ts';
import { indexNotReadyMessage } from '../../shared/status-index.ts';
import { route } from './route.ts';

const page = (query: Record<string, string>): ProbeRequest => ({ method: 'GET', path: pathOf(route), query });

/** Pages of one read through their cursors at most: enough to see a repeated page, bounded for every run. */
export const pagesOfOneRead = 3;

const pagesOfOne: KnownAnswer = {
  name: 'v2 pages of one through their cursors',
  requests: pagesOfOneRead,
  run: async (probe) => {
    const seen = new Map<string, number>();
    let cursor: string | undefined;
    let pages = 0;
    let last = false;
    while (pages < pagesOfOneRead && !last) {
      pages += 1;
      const answer = await probe.ask(page({ pageSize: '1', ...(cursor === undefined ? {} : { cursor }) }));
      if (cursor !== undefined && answer.status !== 200)
        fail(`page ${pages}, through the cursor of page ${pages - 1}, answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      const { orders, nextCursor } = pageOf(answer);
      if (orders.length > 1) fail(`a page of one held ${orders.length} orders`);
      for (const { id } of orders) {
        if (seen.has(String(id)))
          fail(`order ${String(id)} came on page ${seen.get(String(id))} and again on page ${pages}: the cursor repeats a page`);
        seen.set(String(id), pages);
      }
      if (nextCursor !== undefined && nextCursor === cursor) fail(`page ${pages} gave back the cursor it was sent: it does not move on`);
      cursor = nextCursor;
      last = nextCursor === undefined;
    }
    const read = `${pages} ${pages === 1 ? 'page' : 'pages'} of one${last ? ' (to the last)' : ''}`;
    if (seen.size >= 2) return `${read}, ${seen.size} distinct orders: each cursor moved on`;
    return `${read}, ${seen.size} ${seen.size === 1 ? 'order' : 'orders'}: too few orders to show a repeated page`;
  },
};

/** Whether an answer is the 503 a status-filtered page gives while the index is not ready. */
const isIndexNotReady = (answer: Answer) => {
  if (answer.status !== 503) return false;
  try {
    return (JSON.parse(answer.body) as { message?: unknown }).message === indexNotReadyMessage;
  } catch {
    return false;
  }
};

/** A 200 page of pending orders only, or a failure. */
const pendingOnly = (answer: Answer): string => {
  const { orders, nextCursor } = pageOf(answer);
  const other = orders.find((order) => order.status !== 'pending');
  if (other !== undefined) fail(`asked for pending orders, got order ${String(other.id)} with status ${String(other.status)}`);
  return `200, ${orders.length} orders, each pending${nextCursor === undefined ? ', the last page' : ''}`;
};

/**
 * Where the status index is not ready (not deployed yet, or backfilling:
 * docs/reference/stages.md#the-status-index) the page is the 503 with Retry-After clients are promised; a
 * 200 counts if the index became ready meanwhile. Where it is ready, that 503 fails (a version
 * naming an index the table does not have).
 */
const notReadyAnswer = async (probe: Prober) => {
  const answer = await probe.ask(page({ status: 'pending', pageSize: '100' }), { handBack: (candidate) => candidate.status === 503 });
  if (answer.status === 200 && (await probe.statusIndex()) === 'ready') return pendingOnly(answer);
  const refused = expectError(answer, 503, 'service_unavailable');
  if (answer.headers.get('retry-after') === null) fail('answered 503 without Retry-After');
  return `the status index is not ready for Query: ${refused}`;
};

const byStatus: KnownAnswer = {
  name: 'v2 page filtered by status',
  requests: 1,
  run: async (probe) => {
    const state = await probe.statusIndex();
    if (state === 'off') return skip("no filtered page on this stage until its status index is ACTIVE (its config's statusFilterChecks)");
    if (state === 'not ready') return notReadyAnswer(probe);
    // Over HTTP (unknown) the runner cannot tell a backfilling index: its 503 is waited out as busy.
    const answer = await probe.ask(page({ status: 'pending', pageSize: '100' }), state === 'ready' ? { handBack: isIndexNotReady } : {});
    if (state === 'ready' && isIndexNotReady(answer))
      fail(`the status index is ready, yet the page answered the 503 of an index not ready: ${answer.body.slice(0, 200)}`);
    return pendingOnly(answer);
  },
};

/** A one-second window of ship dates: whatever a page holds must have shipped in it. */
const window = { from: '2001-02-03T04:05:06Z', to: '2001-02-03T04:05:07Z' } as const;

const byShipDate: KnownAnswer = {
  name: 'v2 page filtered by ship date',
  requests: 1,
  run: async (probe) => {
    const answer = await probe.ask(page({ shipDateFrom: window.from, shipDateTo: window.to, pageSize: '100' }));
    const { orders } = pageOf(answer);
    const [from, to] = [Date.parse(window.from), Date.parse(window.to)];
    const other = orders.find((order) => {
      const shipped = typeof order.shipDate === 'string' ? Date.parse(order.shipDate) : NaN;
      return !(shipped >= from && shipped < to);
    });
    if (other !== undefined)
      fail(
        `asked for orders shipped from ${window.from} to ${window.to}, got order ${String(other.id)} shipped ${String(other.shipDate ?? 'never')}`,
      );
    return `200, ${orders.length} orders, each shipped in [${window.from}, ${window.to})`;
  },
};

export const knownAnswers: Suite = {
  route,
  harmless: { request: page({ pageSize: '1' }), status: 200 },
  checks: [pagesOfOne, byStatus, byShipDate],
};
