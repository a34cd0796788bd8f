import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Order } from '../../shared/schemas.ts';
import { request, startTestApi } from '../lib/local-api.ts';

// The v2 list's promise at the size the issue names: a client pages through 100,000 orders and
// gets each exactly once, ids above 2^53 among them, through the local gateway and the real
// handler on DynamoDB Local. Orders carry id and status only: the seed is what this test costs.
const count = 100_000;
const edges = ['9223372036854775807', '-9223372036854775808', String(2n ** 53n + 1n), String(-(2n ** 53n) - 1n)];
const ids = [
  ...Array.from({ length: count - 1_000 - edges.length }, (_, i) => String(i + 1)),
  // A thousand ids around 2^53, where a JS number would merge neighbours.
  ...Array.from({ length: 1_000 }, (_, i) => String(2n ** 53n - 500n + BigInt(i) + (i >= 501 ? 1n : 0n))),
  ...edges,
];
const statuses = ['pending', 'shipped', 'cancelled'];
const stored: Order[] = ids.map((id, i) => ({ id, status: statuses[i % 3]! }));

let api: Awaited<ReturnType<typeof startTestApi>>;
let v2: string;
beforeAll(async () => {
  api = await startTestApi(stored);
  v2 = api.url.replace(/\/v1$/, '/v2');
}, 300_000);
afterAll(() => api?.close());

describe('GET /v2/store/orders over 100,000 orders', () => {
  it('gives every order exactly once, int64 ids exact, to a client following nextCursor at the largest page size', async () => {
    const seen = new Map<string, number>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const query = new URLSearchParams({ pageSize: '1000', ...(cursor === undefined ? {} : { cursor }) });
      const response = await request(v2, 'GET', `/store/orders?${query}`, api.auth);
      expect(response.status).toBe(200);
      // Read from the text, so that ids above 2^53 keep every digit.
      for (const [, id] of response.text.matchAll(/"id":(-?\d+)/g)) seen.set(id!, (seen.get(id!) ?? 0) + 1);
      cursor = (response.body as { nextCursor?: string }).nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(new Set(ids).size).toBe(count);
    expect(seen.size).toBe(count);
    expect([...seen.values()].every((times) => times === 1)).toBe(true);
    expect(ids.filter((id) => !seen.has(id))).toEqual([]);
    for (const edge of edges) expect(seen.get(edge)).toBe(1);
    expect(pages).toBeGreaterThanOrEqual(count / 1000);
  }, 600_000);
});
