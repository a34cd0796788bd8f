import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { order, request, startTestApi } from '../lib/local-api.ts';

// A store past what one answer can carry (docs/api.md#limits-of-the-deployed-list) is refused before the first
// byte, not cut off mid-stream. The limits are lowered here; deployed, they are about 1.4
// million orders uncompressed and 5.6 million with gzip (infra/function-settings.ts).
describe('a store larger than one list answer can carry', () => {
  let api: Awaited<ReturnType<typeof startTestApi>>;
  beforeAll(async () => {
    const orders = ['1', '2', '3', '4'].map((id) => order(id, 'pending'));
    api = await startTestApi(orders, { environment: { LIST_MAX_ORDERS: '2', LIST_MAX_ORDERS_GZIP: '5' } });
  });
  afterAll(() => api?.close());

  it('answers 406 list_too_large, asking for gzip, when only the uncompressed answer would be too large', async () => {
    // fetch asks for gzip by default: this client says it takes no compression.
    const response = await request(api.url, 'GET', '/store/orders', { ...api.auth, 'Accept-Encoding': 'identity' });
    expect(response.status).toBe(406);
    expect(response.body).toEqual({ code: 'list_too_large', message: expect.stringContaining('Accept-Encoding: gzip'), status: 406 });
    expect(response.headers.get('x-request-id')).toEqual(expect.any(String));
  });

  it('lists with gzip, which carries more orders', async () => {
    const response = await request(api.url, 'GET', '/store/orders', { ...api.auth, 'Accept-Encoding': 'gzip' });
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(4);
  });

  it('refuses even with gzip past the compressed limit, pointing at the paginated v2', async () => {
    const bigger = await startTestApi(
      ['1', '2', '3', '4'].map((id) => order(id, 'pending')),
      {
        environment: { LIST_MAX_ORDERS: '2', LIST_MAX_ORDERS_GZIP: '3' },
      },
    );
    try {
      const response = await request(bigger.url, 'GET', '/store/orders', { ...bigger.auth, 'Accept-Encoding': 'gzip' });
      expect(response.status).toBe(406);
      expect(response.body).toMatchObject({ code: 'list_too_large', message: expect.stringContaining('/v2') });
    } finally {
      await bigger.close();
    }
  });

  it('holds a list asked with stringIds=true, whose orders are larger, to proportionally fewer orders', async () => {
    // 4 orders fit LIST_MAX_ORDERS=4; with stringIds, 4 × 128 / 224 bytes per order: 2 (functions/list-orders/list-size.ts).
    const limited = await startTestApi(
      ['1', '2', '3', '4'].map((id) => order(id, 'pending')),
      { environment: { LIST_MAX_ORDERS: '4', LIST_MAX_ORDERS_GZIP: '40' } },
    );
    try {
      const identity = { ...limited.auth, 'Accept-Encoding': 'identity' };
      expect((await request(limited.url, 'GET', '/store/orders', identity)).status).toBe(200);
      const refused = await request(limited.url, 'GET', '/store/orders?stringIds=true', identity);
      expect(refused.status).toBe(406);
      expect(refused.body).toMatchObject({ code: 'list_too_large', message: expect.stringContaining('(2)') });
      const zipped = await request(limited.url, 'GET', '/store/orders?stringIds=true', { ...limited.auth, 'Accept-Encoding': 'gzip' });
      expect(zipped.status).toBe(200);
      expect(zipped.body).toContainEqual({ id: 1, idStr: '1', status: 'pending' });
    } finally {
      await limited.close();
    }
  });
});
