import { describe, expect, it } from 'vitest';
import { isApiError } from '../../shared/errors.ts';
import { parseOrderId } from '../../functions/cancel-order/order-id.ts';

const rejection = (raw: string | undefined) => {
  try {
    parseOrderId(raw);
  } catch (error) {
    return isApiError(error) ? { code: error.code, status: error.statusCode } : error;
  }
  return 'accepted';
};

describe('parseOrderId', () => {
  it.each([
    ['0', '0'],
    ['42', '42'],
    ['007', '7'],
    ['-0', '0'],
    ['-17', '-17'],
    ['9007199254740991', '9007199254740991'],
    ['9007199254740993', '9007199254740993'],
    ['9223372036854775807', '9223372036854775807'],
    ['-9223372036854775808', '-9223372036854775808'],
  ])('reads %s as the int64 %s with every digit kept', (raw, expected) => {
    expect(parseOrderId(raw)).toBe(expected);
  });

  it.each([
    ['non-digits', 'abc'],
    ['a decimal', '1.5'],
    ['an exponent', '1e5'],
    ['a sign only', '-'],
    ['a plus sign', '+5'],
    ['one past int64 max', '9223372036854775808'],
    ['one below int64 min', '-9223372036854775809'],
    ['empty', ''],
    ['missing', undefined],
    ['whitespace', ' 1'],
    ['hex', '0x10'],
    ['encoded junk', '%00'],
    ['unicode digits', '١٢٣'],
    ['an absurdly long number', '9'.repeat(10_000)],
  ])('answers 400 invalid_order_id for %s', (_, raw) => {
    expect(rejection(raw)).toEqual({ code: 'invalid_order_id', status: 400 });
  });
});
