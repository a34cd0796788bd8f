import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { scanOrderPages } from '../../functions/list-orders/orders-scan.ts';
import type { InvalidItemReport } from '../../shared/schemas.ts';
import type { Order } from '../../shared/schemas.ts';
import { createTestTables, order } from '../lib/local-api.ts';

const listAll = async (table: Parameters<typeof scanOrderPages>[0], options: Parameters<typeof scanOrderPages>[1] = {}) => {
  const pages: Order[][] = [];
  for await (const page of scanOrderPages(table, options)) pages.push(page);
  return pages;
};

describe('listing orders (parallel Scan)', () => {
  it('returns every order across many pages and segments, each exactly once', async () => {
    const stored = Array.from({ length: 1200 }, (_, i) =>
      order(String(i + 1), i % 3 === 0 ? 'shipped' : 'pending', { petId: String(9_000 + i) }),
    );
    const { orders } = await createTestTables(stored);
    const pages = await listAll(orders, { segments: 4, pageSize: 50 });
    expect(pages.length).toBeGreaterThanOrEqual(1200 / 50);
    const ids = pages.flat().map((o) => o.id);
    expect(ids).toHaveLength(1200);
    expect(new Set(ids)).toEqual(new Set(stored.map((o) => o.id)));
  });

  it('returns an empty list for an empty table', async () => {
    const { orders } = await createTestTables();
    expect((await listAll(orders)).flat()).toEqual([]);
  });

  it('keeps int64 ids and petIds exact at and around 2^53 and at int64 max', async () => {
    const edge = ['9007199254740991', '9007199254740992', '9007199254740993', '9223372036854775807', '-9223372036854775808'];
    const { orders } = await createTestTables(edge.map((id) => order(id, 'pending', { petId: id })));
    const listed = (await listAll(orders)).flat();
    expect(listed.map((o) => [o.id, o.petId]).sort()).toEqual(edge.map((id) => [id, id]).sort());
  });

  it('drops fields that break the table contract and skips items whose id is not an int64, reporting both', async () => {
    const { client, orders } = await createTestTables([order('1', 'pending')]);
    const put = (Item: Record<string, unknown>) => client.send(new PutItemCommand({ TableName: orders.tableName, Item: Item as never }));
    await put({ id: { N: '2' }, quantity: { N: '1.5' }, shipDate: { S: 'soon' }, complete: { S: 'yes' }, status: { S: 'pending' } });
    await put({ id: { N: '1.25' }, status: { S: 'pending' } });
    await put({ id: { N: '3' }, secret: { S: 'internal note' } });
    const reports: InvalidItemReport[] = [];
    const listed = (await listAll(orders, { onInvalid: (report) => reports.push(report) })).flat();
    expect(listed.sort((a, b) => Number(a.id) - Number(b.id))).toEqual([
      order('1', 'pending'),
      { id: '2', status: 'pending' },
      { id: '3' },
    ]);
    expect(reports).toEqual(
      expect.arrayContaining([
        { id: '2', fields: expect.arrayContaining(['quantity', 'shipDate', 'complete']), dropped: 'fields' },
        { id: '1.25', fields: ['id'], dropped: 'item' },
      ]),
    );
  });

  it('drops a quantity outside int32 and strings longer than the OpenAPI document allows, keeping values at the bounds', async () => {
    const { client, orders } = await createTestTables([]);
    const put = (Item: Record<string, unknown>) => client.send(new PutItemCommand({ TableName: orders.tableName, Item: Item as never }));
    const longDate = `2026-12-01T10:00:00.${'1'.repeat(60)}Z`;
    await put({ id: { N: '1' }, quantity: { N: '2147483648' }, shipDate: { S: longDate }, status: { S: 'x'.repeat(65) } });
    await put({ id: { N: '2' }, quantity: { N: '-2147483648' }, status: { S: 'x'.repeat(64) } });
    const reports: InvalidItemReport[] = [];
    const listed = (await listAll(orders, { onInvalid: (report) => reports.push(report) })).flat();
    expect(listed.sort((a, b) => Number(a.id) - Number(b.id))).toEqual([
      { id: '1' },
      { id: '2', quantity: '-2147483648', status: 'x'.repeat(64) },
    ]);
    expect(reports).toEqual([{ id: '1', fields: expect.arrayContaining(['quantity', 'shipDate', 'status']), dropped: 'fields' }]);
  });

  it('answers 503 service_unavailable when DynamoDB cannot be reached', async () => {
    const { createDocumentClient } = await import('../../shared/dynamo.ts');
    const unreachable = { client: createDocumentClient({ endpoint: 'http://127.0.0.1:9' }), tableName: 'orders' };
    await expect(listAll(unreachable)).rejects.toMatchObject({ statusCode: 503, code: 'service_unavailable' });
  });
});
