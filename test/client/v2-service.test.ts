/**
 * The client package's v2 pages against the local service (as `npm start` assembles it) serving
 * `GET /v2/store/orders`: every order once with exact ids, a read resumed from a saved cursor,
 * a status filter, a split read, a cursor used with other filters. The paging logic itself is
 * tested without the service in test/client/unit.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidCursorError, type Order, type OrderPage, StoreOrdersClient } from '../../client/src/index.ts';
import { readAll } from '../lib/client.ts';
import { order, startTestApi } from '../lib/local-api.ts';

// 40 orders with ids above 2^53 (odd ones: JSON.parse would round each to its even neighbour), a third of them pending.
const ids = Array.from({ length: 40 }, (_, i) => 9007199254740993n + 2n * BigInt(i));
const statusOf = (i: number) => ['pending', 'shipped', 'cancelled'][i % 3]!;
const sorted = (values: bigint[]) => [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const idsOf = (pages: { orders: Order[] }[]) => pages.flatMap((page) => page.orders.map((o) => o.id));
/** The first `n` pages of a read, then the read stops (as a client that is stopped would). */
const firstPages = async (pages: AsyncIterable<OrderPage>, n: number) => {
  const read: OrderPage[] = [];
  for await (const page of pages) if (read.push(page) === n) break;
  return read;
};

describe('the client pages through the v2 list of the local service', () => {
  let api: Awaited<ReturnType<typeof startTestApi>>;
  let client: StoreOrdersClient;
  beforeAll(async () => {
    api = await startTestApi(ids.map((id, i) => order(String(id), statusOf(i), { petId: String(-id) })));
    client = new StoreOrdersClient({ baseUrl: api.url, apiKey: api.key });
  });
  afterAll(() => api.close());

  it('yields every order exactly once, ids and petIds exact', async () => {
    const pages = await readAll(client.listOrderPages({ pageSize: 7 }));
    expect(sorted(idsOf(pages))).toEqual(ids);
    expect(pages.flatMap((page) => page.orders).every((o) => o.petId === -o.id)).toBe(true);
    expect(pages.at(-1)!.cursor).toBeUndefined();
  });

  it('resumes from a saved cursor with a new client: the rest of the orders, none twice', async () => {
    const first = await firstPages(client.listOrderPages({ pageSize: 7 }), 2);
    const saved = first.at(-1)!.cursor!;
    const again = new StoreOrdersClient({ baseUrl: api.url, apiKey: api.key });
    const rest = await readAll(again.listOrderPages({ pageSize: 7, cursor: saved }));
    const all = [...idsOf(first), ...idsOf(rest)];
    expect(new Set(all).size).toBe(all.length);
    expect(sorted(all)).toEqual(ids);
  });

  it('filters by status', async () => {
    const pending = idsOf(await readAll(client.listOrderPages({ status: 'pending', pageSize: 5 })));
    expect(sorted(pending)).toEqual(ids.filter((_, i) => statusOf(i) === 'pending'));
  });

  it('reads the whole set as parts of a split read, each order in one part', async () => {
    const parts = await Promise.all([1, 2, 3].map((part) => readAll(client.listOrderPages({ part, parts: 3, pageSize: 6 }))));
    const all = parts.flatMap(idsOf);
    expect(new Set(all).size).toBe(all.length);
    expect(sorted(all)).toEqual(ids);
  });

  it('reads order by order (listOrdersPaged), collects up to a cap, and splits into parts at a set concurrency', async () => {
    const pending = await readAll(client.listOrdersPaged({ status: 'pending', pageSize: 4 }));
    expect(sorted(pending.map((o) => o.id))).toEqual(ids.filter((_, i) => statusOf(i) === 'pending'));
    expect(await client.collectOrders({ limit: 9, pageSize: 4 })).toHaveLength(9);
    const split = await readAll(client.readSplit({ parts: 4, concurrency: 2, pageSize: 3 }));
    expect(sorted(split.map((o) => o.id))).toEqual(ids);
  });

  it('resumes each part of a split read from its own checkpoint', async () => {
    const cursors: Record<number, string | null> = {};
    const taken: Order[] = [];
    let pages = 0;
    const stop = new Error('stopped');
    await expect(
      (async () => {
        for await (const order of client.readSplit({
          parts: 3,
          pageSize: 4,
          onPage: ({ part, cursor }) => {
            cursors[part!] = cursor;
            if (++pages === 4) throw stop;
          },
        }))
          taken.push(order);
      })(),
    ).rejects.toBe(stop);
    const again = new StoreOrdersClient({ baseUrl: api.url, apiKey: api.key });
    const rest = await readAll(again.readSplit({ parts: 3, pageSize: 4, cursors }));
    const all = [...taken, ...rest].map((o) => o.id);
    expect(new Set(all).size).toBe(all.length);
    expect(sorted(all)).toEqual(ids);
  });

  it('throws InvalidCursorError (cursor_mismatch) for a cursor sent with other filters', async () => {
    const [page] = await firstPages(client.listOrderPages({ status: 'pending', pageSize: 2 }), 1);
    const error = await readAll(client.listOrderPages({ status: 'shipped', cursor: page!.cursor! })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidCursorError);
    expect(error).toMatchObject({ code: 'cursor_mismatch', status: 400 });
  });
});
