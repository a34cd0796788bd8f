import { describe, expect, it } from 'vitest';
import { completeOrdersOf } from '../../shared/smoke-check.ts';

describe('the smoke check reading the start of a list (completeOrdersOf)', () => {
  it('closes the array after the last complete order and drops the order cut in half', () => {
    expect(completeOrdersOf('[{"id":1,"status":"pending"},{"id":2,"status":"shi')).toBe('[{"id":1,"status":"pending"}]');
  });

  it('is not fooled by braces and escaped quotes inside strings', () => {
    const prefix = '[{"id":1,"status":"odd } \\" {"},{"id":9223372036854775807,"status":"x}"},{"id":3';
    expect(completeOrdersOf(prefix)).toBe('[{"id":1,"status":"odd } \\" {"},{"id":9223372036854775807,"status":"x}"}]');
  });

  it('leaves a whole list whole, and gives an empty array when no order was complete', () => {
    expect(completeOrdersOf('[{"id":1},{"id":2}]')).toBe('[{"id":1},{"id":2}]');
    expect(completeOrdersOf('[{"id":1')).toBe('[]');
  });

  it('fails on a body that is not a JSON array', () => {
    expect(() => completeOrdersOf('{"code":"internal_error"}')).toThrow('expected a JSON array');
  });
});
