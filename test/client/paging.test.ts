/**
 * The v2 list as developers expect it from Stripe's and Octokit's clients: order by order over the
 * pages (filters, part and a starting cursor as options), collected up to a cap, a checkpoint
 * after each page with the cursor that resumes after it, and a split read that runs N parts at a
 * set concurrency as one stream and resumes each part from its own cursor. Against a small v2
 * service in the test that counts the requests it has under way.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Checkpoint, type Order, StoreOrdersClient } from '../../client/src/index.ts';
import { type Handler, json, readAll, testServer } from '../lib/client.ts';

// 30 orders, ids above 2^53; order i is in part (i % parts) + 1 of a split read.
const store = Array.from({ length: 30 }, (_, i) => 9007199254740993n + BigInt(i));
let service: Awaited<ReturnType<typeof testServer>>;
let underWay = 0;
let mostUnderWay = 0;

/** The v2 list over `store`, each answer after 20 ms; the cursor is the next index of the part's own list. */
const v2: Handler = (_request, response, url) => {
  const parts = Number(url.searchParams.get('parts') ?? 1);
  const part = Number(url.searchParams.get('part') ?? 1);
  const size = Number(url.searchParams.get('pageSize') ?? 100);
  const mine = store.filter((_, i) => i % parts === part - 1);
  const start = Number(url.searchParams.get('cursor') ?? 0);
  const page = mine.slice(start, start + size);
  const next = start + size < mine.length ? `,"nextCursor":"${start + size}"` : '';
  underWay++;
  mostUnderWay = Math.max(mostUnderWay, underWay);
  setTimeout(() => {
    underWay--;
    json(response, 200, `{"orders":[${page.map((id) => `{"id":${id},"status":"pending"}`).join(',')}]${next}}`);
  }, 20);
};

beforeAll(async () => {
  service = await testServer();
});
afterAll(() => service.close());
beforeEach(() => {
  service.seen.length = 0;
  service.handler = v2;
  mostUnderWay = 0;
});

const client = () => new StoreOrdersClient({ baseUrl: service.baseUrl, apiKey: 'key-0123456789abcdef' });
const sorted = (ids: bigint[]) => [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const idsOf = (orders: Order[]) => orders.map((order) => order.id);

describe('listOrdersPaged: order by order', () => {
  it('yields every order of every page, sending filters, part and a starting cursor', async () => {
    const orders = await readAll(client().listOrdersPaged({ pageSize: 4, status: 'pending' }));
    expect(idsOf(orders)).toEqual(store);
    expect(service.seen).toHaveLength(8);
    expect(service.seen.every(({ url }) => url.searchParams.get('status') === 'pending' && url.searchParams.get('pageSize') === '4')).toBe(
      true,
    );
    const part = await readAll(client().listOrdersPaged({ pageSize: 4, part: 2, parts: 3, cursor: '4' }));
    expect(idsOf(part)).toEqual(store.filter((_, i) => i % 3 === 1).slice(4));
  });

  it('hands over the cursor after each page is done: after its last order was taken, before the next page is asked for', async () => {
    const events: string[] = [];
    const pages = service.seen;
    for await (const order of client().listOrdersPaged({
      pageSize: 10,
      onPage: (checkpoint: Checkpoint) => {
        events.push(`checkpoint ${checkpoint.cursor} (${checkpoint.orders} orders, ${pages.length} requests)`);
      },
    }))
      if (order.id === store[9] || order.id === store[29]) events.push(`took ${order.id}`);
    expect(events).toEqual([
      `took ${store[9]}`,
      'checkpoint 10 (10 orders, 1 requests)',
      'checkpoint 20 (10 orders, 2 requests)',
      `took ${store[29]}`,
      'checkpoint null (10 orders, 3 requests)',
    ]);
  });

  it('resumes from a checkpoint after a crash: the rest of the orders, none twice', async () => {
    const done: Order[] = [];
    let saved: string | null = null;
    const crash = new Error('crash');
    await expect(
      (async () => {
        for await (const order of client().listOrdersPaged({ pageSize: 7, onPage: ({ cursor }) => void (saved = cursor) })) {
          if (done.length === 17) throw crash; // in the middle of the third page: its orders taken so far are done again
          done.push(order);
        }
      })(),
    ).rejects.toBe(crash);
    expect(saved).toBe('14');
    const rest = await readAll(client().listOrdersPaged({ pageSize: 7, cursor: saved! }));
    expect(idsOf([...done.slice(0, 14), ...rest])).toEqual(store);
  });
});

describe('collectOrders: at most `limit` orders', () => {
  it('stops asking for pages once it has them', async () => {
    const orders = await client().collectOrders({ limit: 12, pageSize: 5 });
    expect(idsOf(orders)).toEqual(store.slice(0, 12));
    expect(service.seen).toHaveLength(3);
  });

  it('returns all the orders when there are fewer, and refuses a limit that is not a positive integer', async () => {
    expect(await client().collectOrders({ limit: 1000 })).toHaveLength(30);
    await expect(client().collectOrders({ limit: 0 })).rejects.toThrow(TypeError);
    await expect(client().collectOrders({ limit: 1.5 })).rejects.toThrow(TypeError);
  });
});

describe('readSplit: N parts at a set concurrency, one stream of orders', () => {
  it('reads every order once, each part from its own requests, never more than `concurrency` at once', async () => {
    const orders = await readAll(client().readSplit({ parts: 5, concurrency: 2, pageSize: 2 }));
    expect(sorted(idsOf(orders))).toEqual(store);
    expect(mostUnderWay).toBeLessThanOrEqual(2);
    expect(mostUnderWay).toBe(2);
    expect(new Set(service.seen.map(({ url }) => url.searchParams.get('part')))).toEqual(new Set(['1', '2', '3', '4', '5']));
    expect(service.seen.every(({ url }) => url.searchParams.get('parts') === '5')).toBe(true);
  });

  it('checkpoints each part with its own cursor, and resumes each part from it (null: a part done)', async () => {
    const cursors: Record<number, string | null> = {};
    const taken: Order[] = [];
    let pagesDone = 0;
    await expect(
      (async () => {
        for await (const order of client().readSplit({
          parts: 3,
          pageSize: 2,
          onPage: ({ part, cursor }) => {
            cursors[part!] = cursor;
            if (++pagesDone === 7) throw new Error('crash after 7 pages');
          },
        }))
          taken.push(order);
      })(),
    ).rejects.toThrow('crash after 7 pages');
    expect(Object.keys(cursors).sort()).toEqual(['1', '2', '3']);
    service.seen.length = 0;
    const rest = await readAll(client().readSplit({ parts: 3, pageSize: 2, cursors }));
    // Every order once: what the checkpoints covered, then the rest.
    const all = [...taken, ...rest];
    expect(sorted(idsOf(all))).toEqual(store);
    expect(new Set(idsOf(all)).size).toBe(store.length);
    // The resumed read started each part at its cursor.
    const firstOf = (part: string) => service.seen.find(({ url }) => url.searchParams.get('part') === part)?.url.searchParams.get('cursor');
    for (const part of ['1', '2', '3']) if (cursors[Number(part)] !== null) expect(firstOf(part)).toBe(cursors[Number(part)]);
  });

  it('skips a part whose cursor is null, and throws the first failure of any part after aborting the others', async () => {
    const rest = await readAll(client().readSplit({ parts: 3, cursors: { 2: null } }));
    expect(sorted(idsOf(rest))).toEqual(store.filter((_, i) => i % 3 !== 1));
    service.handler = (request, response, url) =>
      url.searchParams.get('part') === '2'
        ? json(response, 400, '{"code":"invalid_cursor","message":"no","status":400}')
        : v2(request, response, url);
    await expect(readAll(client().readSplit({ parts: 3, pageSize: 1 }))).rejects.toMatchObject({
      name: 'InvalidCursorError',
      code: 'invalid_cursor',
    });
    await expect(readAll(client().readSplit({ parts: 17 }))).rejects.toThrow(TypeError);
  });
});
