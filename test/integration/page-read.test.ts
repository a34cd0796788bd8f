import { describe, expect, it } from 'vitest';
import { parseListQuery } from '../../functions/list-orders-paged/list-query.ts';
import { type PageSource, pageSource, readOrderPage } from '../../functions/list-orders-paged/page-read.ts';
import type { TableRef } from '../../shared/dynamo.ts';
import type { Order } from '../../shared/schemas.ts';
import { createTestTables, order } from '../lib/local-api.ts';

const statuses = ['pending', 'shipped', 'cancelled', 'placed'];
// Ids on both sides of 2^53 and at the int64 ends: every one must come back to the digit.
const ids = [
  ...Array.from({ length: 900 }, (_, i) => String(i + 1)),
  ...Array.from({ length: 90 }, (_, i) => String(2n ** 53n - 45n + BigInt(i))),
  '9223372036854775807',
  '-9223372036854775808',
];
const stored = ids.map((id, i) => order(id, i % 7 === 0 ? undefined : statuses[i % statuses.length], { petId: id }));

/** Every page of a source, each read after the last one's key, as a client's cursors would. */
const readAll = async (table: TableRef, source: PageSource, limit: number) => {
  const pages: Order[][] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await readOrderPage(table, source, { limit, startKey });
    expect(page.orders.length).toBeLessThanOrEqual(limit);
    pages.push(page.orders);
    startKey = page.nextKey;
  } while (startKey !== undefined);
  return pages;
};

describe('reading orders a page at a time (v2 list)', () => {
  it('reads a split read from its Scan segment, a status filter from the status index, the rest from the table', () => {
    expect(pageSource(parseListQuery({ part: '3', parts: '4', status: 'pending' }))).toEqual({
      kind: 'scan',
      segment: { segment: 2, totalSegments: 4 },
    });
    expect(pageSource(parseListQuery({ status: 'pending' }))).toEqual({ kind: 'status', status: 'pending' });
    expect(pageSource(parseListQuery({ status: 'pending', part: '1', parts: '1' }))).toEqual({ kind: 'status', status: 'pending' });
    expect(pageSource(parseListQuery({ shipDateFrom: '2026-12-01T00:00:00Z' }))).toEqual({ kind: 'scan' });
  });

  it('reads every order of the table exactly once, int64 ids above 2^53 exact', async () => {
    const { orders } = await createTestTables(stored);
    const listed = (await readAll(orders, { kind: 'scan' }, 100)).flat();
    expect(listed.map((o) => o.id).sort()).toEqual([...ids].sort());
    expect(listed.find((o) => o.id === '9007199254740993')?.petId).toBe('9007199254740993');
  });

  it('reads the orders of one status through the status index, and only those', async () => {
    const { orders } = await createTestTables(stored);
    const listed = (await readAll(orders, { kind: 'status', status: 'pending' }, 50)).flat();
    const wanted = stored.filter((o) => o.status === 'pending').map((o) => o.id);
    expect(listed.map((o) => o.id).sort()).toEqual(wanted.sort());
    expect(listed.every((o) => o.status === 'pending' && o.petId === o.id)).toBe(true);
  });

  it('reads the whole table once across the segments of a split read', async () => {
    const { orders } = await createTestTables(stored);
    const parts = await Promise.all(
      [0, 1, 2].map(async (segment) => (await readAll(orders, { kind: 'scan', segment: { segment, totalSegments: 3 } }, 64)).flat()),
    );
    for (const part of parts) expect(part.length).toBeGreaterThan(0);
    expect(
      parts
        .flat()
        .map((o) => o.id)
        .sort(),
    ).toEqual([...ids].sort());
  });

  it('ends at once on an empty table', async () => {
    const { orders } = await createTestTables([]);
    const page = await readOrderPage(orders, { kind: 'scan' }, { limit: 10 });
    expect(page).toMatchObject({ orders: [] });
    expect(page.nextKey).toBeUndefined();
  });
});
