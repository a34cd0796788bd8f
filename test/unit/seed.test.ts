import { describe, expect, it } from 'vitest';
import { demoOrders, parseSeed } from '../../infra/local/seed.ts';
import { orderSchema } from '../../shared/schemas.ts';

describe('SEED_FILE parsing', () => {
  it('keeps int64 ids exact, including int64 max', () => {
    const orders = parseSeed('[{"id": 9223372036854775807, "petId": 9007199254740993, "status": "pending"}]', 'seed.json');
    expect(orders).toEqual([{ id: '9223372036854775807', petId: '9007199254740993', status: 'pending' }]);
  });

  it('reads every Order field plus status', () => {
    const orders = parseSeed('[{"id":1,"petId":2,"quantity":3,"shipDate":"2026-12-01T10:00:00Z","complete":true,"status":"shipped"}]', 's');
    expect(orders[0]).toEqual({ id: '1', petId: '2', quantity: '3', shipDate: '2026-12-01T10:00:00Z', complete: true, status: 'shipped' });
  });

  it.each([
    ['text that is not JSON', '[{"id": 1', /SEED_FILE s\.json: not valid JSON/],
    ['JSON that is not an array', '{"id": 1}', /SEED_FILE s\.json: must be a JSON array of orders/],
    ['an entry without id', '[{"id": 1}, {"petId": 2}]', /SEED_FILE s\.json: entry 1: id: expected an integer/],
    ['a quoted id', '[{"id": "1"}]', /entry 0 \(id 1\): id: expected an integer/],
    ['a decimal quantity', '[{"id": 1, "quantity": 1.5}]', /entry 0 \(id 1\): quantity: expected an integer/],
    ['a quantity beyond int32', '[{"id": 1, "quantity": 2147483648}]', /entry 0 \(id 1\): quantity: outside the int32 range/],
    ['an id beyond int64', '[{"id": 9223372036854775808}]', /entry 0 \(id 9223372036854775808\): id: outside the int64 range/],
    ['a date that is not RFC 3339', '[{"id": 1, "shipDate": "tomorrow"}]', /entry 0 \(id 1\): shipDate/],
    ['a string complete flag', '[{"id": 1, "complete": "yes"}]', /entry 0 \(id 1\): complete/],
    ['an unknown field', '[{"id": 1, "stauts": "pending"}]', /entry 0 \(id 1\):.*stauts/],
    // The status index's key: DynamoDB refuses a non-string or empty status once the index exists.
    ['an empty status', '[{"id": 1, "status": ""}]', /entry 0 \(id 1\): status/],
    ['a numeric status', '[{"id": 1, "status": 1}]', /entry 0 \(id 1\): status/],
    ['a null status', '[{"id": 1, "status": null}]', /entry 0 \(id 1\): status/],
    ['an entry that is not an object', '[1]', /entry 0:/],
    ['a duplicate id', '[{"id": 5}, {"id": 6}, {"id": 5}]', /entry 2 \(id 5\) repeats the id of entry 0/],
  ])('refuses %s with a message naming the entry', (_, text, message) => {
    expect(() => parseSeed(text, 's.json')).toThrow(message);
  });

  it('ships demo orders that satisfy the Order schema, with every status and int64 edge ids', () => {
    for (const order of demoOrders) expect(orderSchema.safeParse(order).success).toBe(true);
    expect(new Set(demoOrders.map((order) => order.status))).toEqual(new Set(['pending', 'shipped', 'cancelled', 'placed']));
    expect(demoOrders.map((order) => order.id)).toContain('9223372036854775807');
  });
});
