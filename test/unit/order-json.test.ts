import { describe, expect, it } from 'vitest';
import { orderToJson } from '../../shared/order-json.ts';

describe('orderToJson', () => {
  it('writes int64 ids as JSON numbers with every digit', () => {
    const json = orderToJson({ id: '9223372036854775807', petId: '9007199254740993', quantity: '2', status: 'pending' });
    expect(json).toBe('{"id":9223372036854775807,"petId":9007199254740993,"quantity":2,"status":"pending"}');
  });

  it('writes every Order field and nothing for absent ones', () => {
    const json = orderToJson({ id: '1', shipDate: '2026-12-01T10:00:00Z', complete: false });
    expect(JSON.parse(json)).toEqual({ id: 1, shipDate: '2026-12-01T10:00:00Z', complete: false });
  });

  it('escapes strings that another system stored', () => {
    const json = orderToJson({ id: '1', status: 'on "hold"\n\\' });
    expect(JSON.parse(json)).toEqual({ id: 1, status: 'on "hold"\n\\' });
  });

  it('with stringIds, writes idStr and petIdStr beside the numbers: the same digits, as strings', () => {
    const json = orderToJson({ id: '-9223372036854775808', petId: '9007199254740993', quantity: '2' }, true);
    expect(json).toBe(
      '{"id":-9223372036854775808,"idStr":"-9223372036854775808","petId":9007199254740993,"petIdStr":"9007199254740993","quantity":2}',
    );
    expect(orderToJson({ id: '7' }, true)).toBe('{"id":7,"idStr":"7"}');
  });
});
