import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindingHash, sealCursor } from '../../functions/list-orders-paged/cursor.ts';
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { parseListQuery } from '../../functions/list-orders-paged/list-query.ts';
import type { Order } from '../../shared/schemas.ts';
import { type ApiResponse, order, request, startTestApi } from '../lib/local-api.ts';

const statuses = ['pending', 'shipped', 'cancelled', 'placed'];
const ids = [
  ...Array.from({ length: 240 }, (_, i) => String(i + 1)),
  ...Array.from({ length: 40 }, (_, i) => String(2n ** 53n - 20n + BigInt(i))),
  '9223372036854775807',
  '-9223372036854775808',
];
const stored: Order[] = ids.map((id, i) =>
  order(id, statuses[i % 4], {
    petId: id,
    ...(i % 5 === 0 ? {} : { shipDate: new Date(Date.UTC(2026, 10, 1) + i * 3_600_000).toISOString() }),
  }),
);
const secrets = { current: 'test-cursor-secret-0123456789abcdef' };

let api: Awaited<ReturnType<typeof startTestApi>>;
let v2: string;
beforeAll(async () => {
  api = await startTestApi(stored, { environment: { CURSOR_SECRETS: JSON.stringify(secrets) } });
  v2 = api.url.replace(/\/v1$/, '/v2');
});
afterAll(() => api.close());

const get = (query: string, headers: Record<string, string> = api.auth) => request(v2, 'GET', `/store/orders${query}`, headers);
/** The ids of a page, read from the text so that int64 digits stay exact. */
const idsOf = (response: ApiResponse) => [...response.text.matchAll(/"id":(-?\d+)/g)].map((m) => m[1]!);
const nextCursorOf = (response: ApiResponse) => (response.body as { nextCursor?: string }).nextCursor;

/** Every page of a read, following nextCursor, with the pages' responses. */
const readAll = async (parameters: Record<string, string>) => {
  const pages: ApiResponse[] = [];
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ ...parameters, ...(cursor === undefined ? {} : { cursor }) });
    const response = await get(`?${query}`);
    expect(response.status).toBe(200);
    pages.push(response);
    cursor = nextCursorOf(response);
  } while (cursor !== undefined);
  return pages;
};

const refusal = async (query: string, code: string) => {
  const response = await get(query);
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ code, status: 400 });
  return response.body as { message: string };
};

describe('GET /v2/store/orders', () => {
  it('pages through every order exactly once, int64 ids exact, Link on every page but the last', async () => {
    const pages = await readAll({ pageSize: '25' });
    const listed = pages.flatMap(idsOf);
    expect(listed.sort()).toEqual([...ids].sort());
    expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(ids.length / 25));
    for (const page of pages.slice(0, -1)) {
      const cursor = nextCursorOf(page)!;
      expect(page.headers.get('link')).toBe(`<?pageSize=25&cursor=${cursor}>; rel="next"`);
    }
    expect(pages.at(-1)!.headers.get('link')).toBeNull();
    expect(pages.at(-1)!.text).not.toContain('nextCursor');
    expect(pages[0]!.headers.get('cache-control')).toBe('no-store');
    expect(pages.map((page) => page.text).join()).toContain('{"id":9223372036854775807,"petId":9223372036854775807');
  });

  it('a client that follows Link, resolved against the URL it requested, reads every order once', async () => {
    // Under a stage prefix, as on an execute-api URL: a query-only reference keeps the request's path (RFC 3986 §5.2.2).
    const requested = new URL(`${v2}/store/orders?status=pending&pageSize=7`);
    const listed: string[] = [];
    for (let url: URL | undefined = requested; url !== undefined;) {
      expect(url.pathname).toBe(requested.pathname);
      const response = await get(url.search);
      expect(response.status).toBe(200);
      listed.push(...idsOf(response));
      const target = /^<([^>]*)>; rel="next"$/.exec(response.headers.get('link') ?? '')?.[1];
      url = target === undefined ? undefined : new URL(target, url);
    }
    expect(listed.sort()).toEqual(
      stored
        .filter((o) => o.status === 'pending')
        .map((o) => String(o.id))
        .sort(),
    );
  });

  it('answers 100 orders a page by default, at most 1000', async () => {
    expect(idsOf(await get('')).length).toBeLessThanOrEqual(100);
    const all = await get('?pageSize=1000');
    expect(idsOf(all).sort()).toEqual([...ids].sort());
  });

  it('resumes from any cursor, also with another pageSize, and again from the same cursor', async () => {
    const first = await get('?pageSize=30');
    const cursor = nextCursorOf(first)!;
    const rest = await readAll({ pageSize: '70', cursor });
    const again = await readAll({ pageSize: '70', cursor });
    expect(rest.flatMap(idsOf)).toEqual(again.flatMap(idsOf));
    expect([...idsOf(first), ...rest.flatMap(idsOf)].sort()).toEqual([...ids].sort());
  });

  it.each(['pending', 'shipped', 'cancelled'])('returns exactly the orders of status=%s', async (status) => {
    const pages = await readAll({ status, pageSize: '20' });
    expect(pages.flatMap(idsOf).sort()).toEqual(
      stored
        .filter((o) => o.status === status)
        .map((o) => o.id)
        .sort(),
    );
  });

  it('returns exactly the orders of a shipDate range, with or without a status; none without a shipDate', async () => {
    const from = '2026-11-03T00:00:00Z';
    const to = '2026-11-06T01:00:00+01:00';
    const inRange = (o: Order) =>
      o.shipDate !== undefined && Date.parse(o.shipDate) >= Date.parse(from) && Date.parse(o.shipDate) < Date.parse(to);
    const range = await readAll({ shipDateFrom: from, shipDateTo: to, pageSize: '40' });
    expect(range.flatMap(idsOf).sort()).toEqual(
      stored
        .filter(inRange)
        .map((o) => o.id)
        .sort(),
    );
    const pending = await readAll({ status: 'pending', shipDateFrom: from, pageSize: '40' });
    expect(pending.flatMap(idsOf).sort()).toEqual(
      stored
        .filter((o) => o.status === 'pending' && o.shipDate !== undefined && Date.parse(o.shipDate) >= Date.parse(from))
        .map((o) => o.id)
        .sort(),
    );
  });

  it('splits a read into parts that together are the whole store, each paged on its own', async () => {
    const parts = await Promise.all([1, 2, 3, 4].map((part) => readAll({ part: String(part), parts: '4', pageSize: '20' })));
    const listed = parts.map((pages) => pages.flatMap(idsOf));
    for (const part of listed) expect(part.length).toBeGreaterThan(0);
    expect(listed.flat().sort()).toEqual([...ids].sort());
    const filtered = await Promise.all([1, 2].map((part) => readAll({ part: String(part), parts: '2', status: 'shipped' })));
    expect(filtered.flat().flatMap(idsOf).sort()).toEqual(
      stored
        .filter((o) => o.status === 'shipped')
        .map((o) => o.id)
        .sort(),
    );
  });

  it.each([
    ['?pageSize=0', 'pageSize'],
    ['?pageSize=1001', 'pageSize'],
    ['?pageSize=ten', 'pageSize'],
    ['?status=placed', 'status'],
    ['?shipDateFrom=yesterday', 'shipDateFrom'],
    ['?shipDateTo=2026-11-01', 'shipDateTo'],
    ['?shipDateFrom=2026-12-02T00:00:00Z&shipDateTo=2026-12-01T00:00:00Z', 'shipDateTo'],
    ['?part=1', 'parts'],
    ['?parts=4', 'part'],
    ['?part=5&parts=4', 'part'],
    ['?part=1&parts=17', 'parts'],
  ])('answers %s with 400 invalid_query_parameter naming %s', async (query, name) => {
    const { message } = await refusal(query, 'invalid_query_parameter');
    expect(message.startsWith(`${name} `)).toBe(true);
  });

  it('answers a garbled, tampered or foreign cursor with 400 invalid_cursor', async () => {
    const cursor = nextCursorOf(await get('?pageSize=10'))!;
    const bytes = Buffer.from(cursor, 'base64url');
    bytes[bytes.length - 1] = bytes.at(-1)! ^ 1;
    await refusal(`?pageSize=10&cursor=${bytes.toString('base64url')}`, 'invalid_cursor');
    await refusal('?cursor=not-a-cursor', 'invalid_cursor');
    await refusal('?cursor=', 'invalid_cursor');
    await refusal(`?cursor=${'A'.repeat(2000)}`, 'invalid_cursor');
    const startKey = { id: NumberValue.from('1') };
    const binding = parseListQuery({}).binding;
    await refusal(`?cursor=${sealCursor(secrets, { stage: 'production', binding, startKey })}`, 'invalid_cursor');
    await refusal(`?cursor=${sealCursor({ current: 'x'.repeat(40) }, { stage: 'local', binding, startKey })}`, 'invalid_cursor');
  });

  it('answers an expired cursor with 400 cursor_expired', async () => {
    const binding = parseListQuery({}).binding;
    const old = sealCursor(
      secrets,
      { stage: 'local', binding, startKey: { id: NumberValue.from('1') } },
      new Date(Date.now() - 25 * 3_600_000),
    );
    await refusal(`?cursor=${old}`, 'cursor_expired');
  });

  it('answers a cursor sent with other filters or another part with 400 cursor_mismatch', async () => {
    const cursor = nextCursorOf(await get('?pageSize=10&status=pending'))!;
    await refusal(`?cursor=${cursor}`, 'cursor_mismatch');
    await refusal(`?cursor=${cursor}&status=shipped`, 'cursor_mismatch');
    const split = nextCursorOf(await get('?pageSize=5&part=1&parts=2'))!;
    await refusal(`?cursor=${split}&part=2&parts=2`, 'cursor_mismatch');
    expect(bindingHash({})).not.toBe(parseListQuery({ part: '1', parts: '2' }).binding);
  });

  it('answers 401 without a key, as every operation does', async () => {
    const response = await get('', {});
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ code: 'unauthorized' });
  });
});
