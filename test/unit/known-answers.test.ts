/**
 * The known-answer suite judged against a prober that answers as told, in process: what each check
 * proves by what it reads back, what it cannot prove on thin data (and says so), and how a run
 * reports each verdict. The runners against real services: test/http/smoke.test.ts,
 * test/http/canary.test.ts, test/shipped/pre-traffic-hook.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { knownAnswers as cancel } from '../../functions/cancel-order/known-answers.ts';
import { knownAnswers as v1 } from '../../functions/list-orders/known-answers.ts';
import { knownAnswers as v2, pagesOfOneRead } from '../../functions/list-orders-paged/known-answers.ts';
import { type Answer, listedOrders, pageOf, ServiceBusy, SetupFailed } from '../../shared/answers.ts';
import { type Prober, type ProbeRequest, runSuites, type StoredProbeOrder, summaryOf, type Suite } from '../../shared/known-answers.ts';
import { indexNotReadyMessage } from '../../shared/status-index.ts';

const answer = (status: number, body: unknown = '', headers: Record<string, string> = {}): Answer => ({
  status,
  headers: new Headers({ 'X-Request-Id': 'r-1', ...headers }),
  body: typeof body === 'string' ? body : JSON.stringify(body),
  firstByteMs: 0,
});
const order = (id: string, status = 'pending', extra = '') => `{"id":${id},"status":"${status}"${extra}}`;
const page = (orders: string[], nextCursor?: string) =>
  answer(200, `{"orders":[${orders.join(',')}]${nextCursor === undefined ? '' : `,"nextCursor":"${nextCursor}"`}}`);

/** A prober whose answers `answerOf` makes; its orders in memory, written and read back as a table would. */
const prober = (answerOf: (request: ProbeRequest, stored: Map<string, StoredProbeOrder>) => Answer, extra: Partial<Prober> = {}) => {
  const stored = new Map<string, StoredProbeOrder>();
  const asked: ProbeRequest[] = [];
  const probe: Prober = {
    ask: async (request) => (asked.push(request), answerOf(request, stored)),
    authorize: async () => ({ via: 'gateway', answer: answer(404) }),
    orders: {
      put: async (status) => (stored.set('-9223372036854775799', { status }), '-9223372036854775799'),
      read: async (id) => stored.get(id),
      remove: async (id) => void stored.delete(id),
    },
    list: { reads: 1, bounded: true },
    statusIndex: async () => 'ready',
    ...extra,
  };
  return { probe, asked, stored };
};
const check = (suite: Suite, name: string) => suite.checks.find((known) => known.name === name)!;

describe('reading answers exactly', () => {
  it('keeps every int64 digit for digit, without JSON.parse source text', () => {
    const [first] = listedOrders(answer(200, `[${order('9223372036854775807', 'pending', ',"petId":9007199254740993,"idText":"x"')}]`));
    expect(first).toMatchObject({ id: '9223372036854775807', petId: '9007199254740993', idText: 'x' });
  });

  it('refuses an id sent as a JSON string, a fraction, or past int64, and a string holding U+0000', () => {
    for (const body of ['[{"id":"1"}]', '[{"id":1.5}]', '[{"id":9223372036854775808}]'])
      expect(() => listedOrders(answer(200, body)), body).toThrow(/^order 0 is not a valid Order/);
    expect(() => listedOrders(answer(200, '[{"id":1,"status":"\\u00001"}]'))).toThrow(/^expected JSON/);
  });

  it('reads a list its reader cut up to its last whole order', () => {
    const cut = { ...answer(200, `[${order('1')},${order('2')},{"id":3,"sta`), cut: true };
    expect(listedOrders(cut).map((entry) => entry.id)).toEqual(['1', '2']);
  });

  it('refuses a page whose cursor is not a string, or that has no orders array', () => {
    expect(() => pageOf(answer(200, '{"orders":[],"nextCursor":5}'))).toThrow(/^nextCursor is not a string/);
    expect(() => pageOf(answer(200, '[]'))).toThrow(/^answered 200 without an orders array/);
  });
});

describe('v2 pages of one through their cursors', () => {
  const pages = check(v2, 'v2 pages of one through their cursors');

  it(`passes distinct orders through ${pagesOfOneRead} pages, each read through the last page's cursor`, async () => {
    const { probe, asked } = prober((request) => {
      const at = Number(request.query?.cursor ?? '0');
      return page([order(String(at + 1))], String(at + 1));
    });
    await expect(pages.run(probe)).resolves.toBe('3 pages of one, 3 distinct orders: each cursor moved on');
    expect(asked.map((request) => request.query)).toEqual([
      { pageSize: '1' },
      { pageSize: '1', cursor: '1' },
      { pageSize: '1', cursor: '2' },
    ]);
  });

  it('fails a cursor that is ignored: the first page again, named as a repeated page', async () => {
    const { probe } = prober(() => page([order('7')], 'c'));
    await expect(pages.run(probe)).rejects.toThrow('order 7 came on page 1 and again on page 2: the cursor repeats a page');
  });

  it('says it proves nothing where the first pages hold no order (probe orders only), and never reads past its bound', async () => {
    const { probe, asked } = prober((request) => page([], `${request.query?.cursor ?? ''}x`));
    await expect(pages.run(probe)).resolves.toBe('3 pages of one, 0 orders: too few orders to show a repeated page');
    expect(asked).toHaveLength(pagesOfOneRead);
  });

  it('fails a second page refused through its own cursor, and a page of one holding two', async () => {
    const refused = prober((request) =>
      request.query?.cursor === undefined ? page([order('1')], 'c') : answer(400, { code: 'invalid_cursor' }),
    );
    await expect(pages.run(refused.probe)).rejects.toThrow(/^page 2, through the cursor of page 1, answered 400/);
    const two = prober(() => page([order('1'), order('2')]));
    await expect(pages.run(two.probe)).rejects.toThrow('a page of one held 2 orders');
  });
});

describe('v2 filtered pages', () => {
  const byStatus = check(v2, 'v2 page filtered by status');
  const byShipDate = check(v2, 'v2 page filtered by ship date');
  const notReady = answer(503, { code: 'service_unavailable', message: indexNotReadyMessage, status: 503 }, { 'Retry-After': '60' });

  it('fail an order that does not match, and pass only matching ones', async () => {
    const ignored = prober(() => page([order('1'), order('2', 'shipped', ',"shipDate":"2026-01-01T00:00:00Z"')]));
    await expect(byStatus.run(ignored.probe)).rejects.toThrow('asked for pending orders, got order 2 with status shipped');
    await expect(byShipDate.run(ignored.probe)).rejects.toThrow(/got order 1 shipped never$/);
    const honest = prober(() => page([order('3', 'pending', ',"shipDate":"2001-02-03T04:05:06.5Z"')]));
    await expect(byStatus.run(honest.probe)).resolves.toBe('200, 1 orders, each pending, the last page');
    await expect(byShipDate.run(honest.probe)).resolves.toMatch(/^200, 1 orders, each shipped in /);
  });

  it('fails an index\'s "not ready" 503 where the index is known ready, and leaves it to the runner\'s busy handling where it is not known', async () => {
    const ready = prober(() => notReady, { statusIndex: async () => 'ready' });
    await expect(byStatus.run(ready.probe)).rejects.toThrow(/^the status index is ready, yet the page answered the 503/);
    // Over HTTP the runner waits the 503 out as busy (test/http/status-index-not-ready.test.ts); this prober hands it back.
    const unknown = prober(() => notReady, { statusIndex: async () => 'unknown' });
    await expect(byStatus.run(unknown.probe)).rejects.toThrow(/^expected 200, got 503/);
  });

  it('passes the documented 503 with Retry-After while the index is not ready, and skips the page where the stage asks for none', async () => {
    const { probe } = prober(() => notReady, { statusIndex: async () => 'not ready' });
    await expect(byStatus.run(probe)).resolves.toMatch(/^the status index is not ready for Query: 503 service_unavailable/);
    const off = prober(() => notReady, { statusIndex: async () => 'off' });
    await expect(byStatus.run(off.probe)).rejects.toThrow(/^no filtered page on this stage/);
  });
});

describe('the cancel, read back', () => {
  /** A cancel that answers `status` for `from` and writes `written` (the real one: 204 and cancelled for pending only). */
  const cancelling = (behave: (stored: StoredProbeOrder | undefined) => { status: number; code?: string; written?: StoredProbeOrder }) =>
    prober((request, stored) => {
      const id = decodeURIComponent(request.path.split('/').at(-1)!);
      if (!/^-?\d+$/.test(id)) return answer(400, { code: 'invalid_order_id', message: 'm', status: 400 });
      const { status, code, written } = behave(stored.get(id));
      if (written !== undefined) stored.set(id, written);
      return answer(status, code === undefined ? '' : { code, message: 'm', status });
    });
  const right = (order: StoredProbeOrder | undefined) =>
    order === undefined
      ? { status: 404, code: 'order_not_found' }
      : order.status === 'pending'
        ? { status: 204, written: { status: 'cancelled', cancelledAt: `${Math.random()}` } }
        : order.status === 'shipped'
          ? { status: 409, code: 'order_already_shipped' }
          : { status: 204 };

  it('passes the right cancel on every check, and removes each order it wrote', async () => {
    const { probe, stored } = cancelling(right);
    const outcome = await runSuites([cancel], probe);
    expect(outcome.failed).toEqual([]);
    expect(stored.size).toBe(0);
  });

  it.each([
    [
      'answers 204 without writing',
      () => ({ status: 204 }),
      ['cancel of a pending order, and again', 'cancel of a shipped order', 'cancel of an absent order'],
    ],
    [
      'cancels a shipped order',
      (order: StoredProbeOrder | undefined) =>
        order?.status === 'shipped' ? { status: 204, written: { status: 'cancelled', cancelledAt: 't' } } : right(order),
      ['cancel of a shipped order'],
    ],
    [
      'writes cancelledAt again on a second cancel',
      (order: StoredProbeOrder | undefined) =>
        order?.status === 'cancelled' ? { status: 204, written: { status: 'cancelled', cancelledAt: 'later' } } : right(order),
      ['cancel of a pending order, and again'],
    ],
    [
      'refuses a shipped order as not cancellable',
      (order: StoredProbeOrder | undefined) =>
        order?.status === 'shipped' ? { status: 409, code: 'order_not_cancellable' } : right(order),
      ['cancel of a shipped order'],
    ],
  ] as const)('fails a cancel that %s, naming the checks', async (_what, behave, failed) => {
    const { probe } = cancelling(behave as Parameters<typeof cancelling>[0]);
    expect((await runSuites([cancel], probe)).failed).toEqual(failed);
  });

  it('skips, saying why, the checks that need an order where the runner may write none', async () => {
    const { probe } = cancelling(right);
    const outcome = await runSuites([cancel], { ...probe, orders: undefined, noOrders: 'a deployed stage' } as Prober);
    expect(outcome.skipped).toEqual(['cancel of a pending order, and again', 'cancel of a shipped order']);
    expect(outcome.lines[0]).toBe('SKIP  cancel of a pending order, and again: a deployed stage');
  });
});

describe('a run of the suite', () => {
  const suite = (run: () => Promise<string>): Suite => ({ checks: [{ name: 'one', requests: 1, run }] });

  it('gives each verdict its line, and the summary counts them apart', async () => {
    const { probe } = prober(() => answer(200, '[]'));
    const outcome = await runSuites(
      [
        suite(async () => 'fine'),
        suite(async () => Promise.reject(new ServiceBusy('refused'))),
        suite(async () => Promise.reject(new SetupFailed('no key'))),
        { checks: [check(v1, 'v1 list')] },
      ],
      probe,
    );
    expect(outcome.lines).toEqual([
      'PASS  one: fine',
      'BUSY  one: refused',
      'SETUP one: no key',
      expect.stringMatching(/^PASS {2}v1 list: 200, 0 valid orders in 2 bytes, each id once$/),
    ]);
    expect(summaryOf(outcome)).toBe(
      "2 of 4 checks passed, 1 busy (refused with Retry-After until the run's time ran out), 1 not set up (one).",
    );
  });

  it('fails an answer without X-Request-Id, whatever the check', async () => {
    const { probe } = prober(() => ({ ...answer(200, '[]'), headers: new Headers() }));
    expect((await runSuites([v1], probe)).lines[0]).toBe('FAIL  v1 list: no X-Request-Id header');
  });

  it('starts no check past its deadline: busy if a busy check took the time, else failed', async () => {
    const { probe } = prober(() => answer(200, '[]'));
    const late = await runSuites([v1], probe, { deadline: Date.now() - 1 });
    expect(late.lines).toEqual([
      'FAIL  v1 list: not started: the checks reached their deadline',
      'FAIL  v1 list with gzip: not started: the checks reached their deadline',
    ]);
  });
});
