import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { cancelOrder } from '../../functions/cancel-order/cancel-update.ts';
import { createTestTables, order } from '../lib/local-api.ts';

describe('cancelling an order (one conditional UpdateItem)', () => {
  it('cancels a pending order and records when', async () => {
    const { orders } = await createTestTables([order('10', 'pending', { petId: '5', quantity: '1' })]);
    const now = new Date('2026-11-21T12:00:00.000Z');
    expect(await cancelOrder(orders, '10', { now })).toEqual({ outcome: 'cancelled' });
    const { Item } = await orders.client.send(new GetCommand({ TableName: orders.tableName, Key: { id: 10 } }));
    expect(Item).toMatchObject({ status: 'cancelled', cancelledAt: '2026-11-21T12:00:00.000Z' });
    expect(String(Item?.petId)).toBe('5');
  });

  it('answers already_cancelled on a repeat and leaves the first cancellation time alone', async () => {
    const { orders } = await createTestTables([order('11', 'pending')]);
    await cancelOrder(orders, '11', { now: new Date('2026-11-21T12:00:00.000Z') });
    expect(await cancelOrder(orders, '11', { now: new Date('2026-11-22T12:00:00.000Z') })).toEqual({ outcome: 'already_cancelled' });
    const { Item } = await orders.client.send(new GetCommand({ TableName: orders.tableName, Key: { id: 11 } }));
    expect(Item?.cancelledAt).toBe('2026-11-21T12:00:00.000Z');
  });

  it('refuses a shipped order and leaves it exactly as it was', async () => {
    const { client, orders } = await createTestTables([order('12', 'shipped', { complete: true, shipDate: '2026-11-01T00:00:00Z' })]);
    const before = await client.send(new GetItemCommand({ TableName: orders.tableName, Key: { id: { N: '12' } } }));
    expect(await cancelOrder(orders, '12')).toEqual({ outcome: 'not_cancellable', status: 'shipped' });
    const after = await client.send(new GetItemCommand({ TableName: orders.tableName, Key: { id: { N: '12' } } }));
    expect(after.Item).toEqual(before.Item);
  });

  it('refuses an order in any other status, naming it, and one without status', async () => {
    const { orders } = await createTestTables([order('13', 'placed'), order('14', undefined)]);
    expect(await cancelOrder(orders, '13')).toEqual({ outcome: 'not_cancellable', status: 'placed' });
    expect(await cancelOrder(orders, '14')).toEqual({ outcome: 'not_cancellable', status: undefined });
  });

  it('answers not_found for an unknown id without creating an item', async () => {
    const { orders } = await createTestTables();
    expect(await cancelOrder(orders, '404')).toEqual({ outcome: 'not_found' });
    const { Item } = await orders.client.send(new GetCommand({ TableName: orders.tableName, Key: { id: 404 } }));
    expect(Item).toBeUndefined();
  });

  it('cancels int64 max and ids past 2^53 by their exact id, not a rounded neighbour', async () => {
    const { orders } = await createTestTables([
      order('9223372036854775807', 'pending'),
      order('9007199254740993', 'pending'),
      order('9007199254740992', 'pending'),
    ]);
    expect(await cancelOrder(orders, '9223372036854775807')).toEqual({ outcome: 'cancelled' });
    expect(await cancelOrder(orders, '9007199254740993')).toEqual({ outcome: 'cancelled' });
    const statusOf = async (id: string) =>
      (await orders.client.send(new GetCommand({ TableName: orders.tableName, Key: { id: NumberValue.from(id) } }))).Item?.status;
    expect(await statusOf('9223372036854775807')).toBe('cancelled');
    expect(await statusOf('9007199254740993')).toBe('cancelled');
    expect(await statusOf('9007199254740992')).toBe('pending');
  });

  it('lets exactly one of many concurrent cancels do the cancelling', async () => {
    const { orders } = await createTestTables([order('15', 'pending')]);
    const outcomes = await Promise.all(Array.from({ length: 12 }, () => cancelOrder(orders, '15')));
    expect(outcomes.filter((o) => o.outcome === 'cancelled')).toHaveLength(1);
    expect(outcomes.filter((o) => o.outcome === 'already_cancelled')).toHaveLength(11);
  });
});
