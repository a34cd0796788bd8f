/**
 * cancelOrder's known answers (shared/known-answers.ts), each proven by what the prober reads back
 * of an order of its own (shared/probe-writes.ts): a pending order is cancelled (204, stored
 * `cancelled` with its `cancelledAt`), and again (204, unchanged); a shipped one is refused (409
 * `order_already_shipped`, stored unchanged); an absent id answers 404, a malformed one 400. The
 * registry collects this suite; the handler never imports it.
 */
import { type Answer, expectEmpty, expectError, fail } from '../../shared/answers.ts';
import {
  type KnownAnswer,
  pathOf,
  type Prober,
  type ProbeRequest,
  shown,
  skip,
  type StoredProbeOrder,
  type Suite,
} from '../../shared/known-answers.ts';
import { idThatCannotExist } from '../../shared/probes.ts';
import { route } from './route.ts';

const cancel = (orderId: string): ProbeRequest => ({ method: 'DELETE', path: pathOf(route, orderId) });

/** `check` on an order of the prober's own in `status`, deleted after; SKIP where the runner may write none. */
const withOrder = async (probe: Prober, status: 'pending' | 'shipped', check: (id: string) => Promise<string>) => {
  const orders = probe.orders ?? skip(probe.noOrders ?? 'this runner writes no probe order');
  const id = await orders.put(status);
  try {
    return await check(id);
  } finally {
    await orders.remove(id);
  }
};

/** The answer, and the order as stored after it: each a known answer of its own. */
const cancelAndReadBack = async (probe: Prober, id: string): Promise<[Answer, StoredProbeOrder | undefined]> => {
  const answer = await probe.ask(cancel(id));
  return [answer, await probe.orders!.read(id)];
};

const pending: KnownAnswer = {
  name: 'cancel of a pending order, and again',
  requests: 2,
  run: (probe) =>
    withOrder(probe, 'pending', async (id) => {
      const [first, stored] = await cancelAndReadBack(probe, id);
      const line = expectEmpty(first, 204);
      if (stored?.status !== 'cancelled' || stored.cancelledAt === undefined)
        return fail(`answered 204, but the order is stored ${shown(stored)}, not cancelled with its cancelledAt`);
      const [second, again] = await cancelAndReadBack(probe, id);
      if (second.status !== 204) fail(`the second cancel: expected 204, got ${second.status}: ${second.body.slice(0, 200)}`);
      if (again?.status !== 'cancelled' || again.cancelledAt !== stored.cancelledAt)
        fail(`the second cancel answered 204 and changed the order: stored ${shown(again)}, was cancelled at ${stored.cancelledAt}`);
      return `order ${id}: ${line}, stored cancelled at ${stored.cancelledAt}; again 204, unchanged`;
    }),
};

const shipped: KnownAnswer = {
  name: 'cancel of a shipped order',
  requests: 1,
  run: (probe) =>
    withOrder(probe, 'shipped', async (id) => {
      const [answer, stored] = await cancelAndReadBack(probe, id);
      const untouched = stored?.status === 'shipped' && stored.cancelledAt === undefined;
      if (answer.status !== 409 && !untouched)
        fail(`expected 409 order_already_shipped, got ${answer.status}, and the order is now stored ${shown(stored)}`);
      const line = expectError(answer, 409, 'order_already_shipped');
      if (!untouched) fail(`answered 409, but the order is now stored ${shown(stored)}, not shipped as it was`);
      return `order ${id}: ${line}, stored shipped as it was`;
    }),
};

const absent: KnownAnswer = {
  name: 'cancel of an absent order',
  requests: 1,
  run: async (probe) => `order ${idThatCannotExist}: ${expectError(await probe.ask(cancel(idThatCannotExist)), 404, 'order_not_found')}`,
};

const malformed: KnownAnswer = {
  name: 'cancel of a malformed id',
  requests: 1,
  run: async (probe) => `order not-an-order-id: ${expectError(await probe.ask(cancel('not-an-order-id')), 400, 'invalid_order_id')}`,
};

export const knownAnswers: Suite = {
  route,
  // int64's minimum is never an order: the cancel's one conditional write changes nothing.
  harmless: { request: cancel(idThatCannotExist), status: 404 },
  checks: [pending, shipped, absent, malformed],
};
