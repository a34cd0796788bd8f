/**
 * listOrders' known answers (shared/known-answers.ts): the list, plain and with gzip, is a JSON
 * array of valid Orders, every int64 exact, each id once; a probe's key (the canary tier) is
 * answered a list the function ends at the probes' bound (shared/probes.ts), so the read is bounded
 * whatever the store holds. The pre-traffic hook reads it once more than its key's list slots in a
 * row (a version that keeps its lease is refused the last time) and compares an empty list with the
 * table's item count. The registry collects this suite; the handler never imports it.
 */
import { type Answer, fail, listedOrders, repeatedId } from '../../shared/answers.ts';
import { type KnownAnswer, pathOf, type Prober, type Suite } from '../../shared/known-answers.ts';
import { probeListBytes, probeOrdersCountedAtMost } from '../../shared/probes.ts';
import { route } from './route.ts';

/** The orders of one list answer: valid, exact, each id once, and not cut where the function must end it at the bound. */
const judged = (probe: Prober, answer: Answer) => {
  const orders = listedOrders(answer);
  if (answer.cut && probe.list.bounded)
    fail(`the list went on past ${probeListBytes} bytes and a Scan page: this version does not end a probe's list at its bound`);
  const twice = repeatedId(orders);
  if (twice !== undefined) fail(`order ${twice} is listed twice in ${orders.length} orders`);
  return orders;
};

/** What was read: the whole list, or its first orders where the reader stopped. */
const described = (answer: Answer, count: number) =>
  answer.cut
    ? `the first ${count} valid orders (reading stopped after ${Buffer.byteLength(answer.body)} bytes)`
    : `${count} valid orders in ${Buffer.byteLength(answer.body)} bytes`;

const list: KnownAnswer = {
  name: 'v1 list',
  requests: 1,
  run: async (probe) => {
    let answer: Answer | undefined;
    let orders: Record<string, unknown>[] = [];
    for (let read = 1; read <= probe.list.reads; read++) {
      answer = await probe.ask({ method: 'GET', path: pathOf(route) });
      orders = judged(probe, answer);
    }
    const count = orders.length === 0 && probe.itemCount !== undefined ? await probe.itemCount() : undefined;
    if (count !== undefined && count > probeOrdersCountedAtMost) fail(`answered [] while the table's item count is ${count}`);
    const times = probe.list.reads > 1 ? ` (read ${probe.list.reads} times in a row)` : '';
    return `200, ${described(answer!, orders.length)}, each id once${times}`;
  },
};

const gzip: KnownAnswer = {
  name: 'v1 list with gzip',
  requests: 1,
  run: async (probe) => {
    const answer = await probe.ask({ method: 'GET', path: pathOf(route), gzip: true });
    const orders = judged(probe, answer);
    if (answer.headers.get('content-encoding') !== 'gzip') fail('asked for gzip, got no Content-Encoding: gzip');
    return `200 gzip, ${described(answer, orders.length)}, each id once`;
  },
};

export const knownAnswers: Suite = { route, checks: [list, gzip] };
