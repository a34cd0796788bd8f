import { describe, expect, it } from 'vitest';
import { type ErrorCode, errorCodes, errorRecord, listTooLargeMessage, notCancellableMessage } from '../../shared/errors.ts';
import { errorRecordSchema, stringBounds } from '../../shared/schemas.ts';

const problems = (value: unknown) => errorRecordSchema.safeParse(value).error?.issues ?? [];

describe('Error records within the bounds the OpenAPI document gives them', () => {
  it('every code of the table makes a valid record: snake_case code, bounded message, status 100-599', () => {
    for (const code of Object.keys(errorCodes) as ErrorCode[]) expect(problems(errorRecord(code)), code).toEqual([]);
  });

  it('refuses a record past a bound, so the check above can fail', () => {
    expect(problems({ code: 'Not-Snake', message: 'x', status: 400 })).not.toEqual([]);
    expect(problems({ code: 'bad_request', message: 'x'.repeat(stringBounds.errorMessage + 1), status: 400 })).not.toEqual([]);
    expect(problems({ code: 'bad_request', message: 'x', status: 600 })).not.toEqual([]);
  });

  it('the longest messages the code builds fit Error.message', () => {
    // '-1.7976931348623157e+308': 24 characters, longer than any count or limit prints.
    const longNumber = -Number.MAX_VALUE;
    const limits = { plain: longNumber, gzip: longNumber };
    const messages = [
      listTooLargeMessage(longNumber, true, limits),
      listTooLargeMessage(longNumber, false, limits),
      // JSON.stringify writes a control character as six characters (\u0000): the longest quote.
      notCancellableMessage('\u0000'.repeat(stringBounds.orderStatus)),
      notCancellableMessage('x'.repeat(400_000)),
      notCancellableMessage(undefined),
    ];
    for (const message of messages) expect(problems(errorRecord('order_not_cancellable', message)), message).toEqual([]);
  });

  it("quotes a status of an Order's length, and not a longer one (a stored item may hold up to 400 KB)", () => {
    expect(notCancellableMessage('placed')).toBe('The order is "placed", not "pending", and cannot be cancelled.');
    expect(notCancellableMessage('x'.repeat(stringBounds.orderStatus))).toContain('x'.repeat(stringBounds.orderStatus));
    expect(notCancellableMessage('x'.repeat(stringBounds.orderStatus + 1))).toBe(errorCodes.order_not_cancellable.message);
    expect(notCancellableMessage(undefined)).toBe('The order has no status and cannot be cancelled.');
  });

  it('tells a too-large list to use gzip only when gzip would carry it', () => {
    const limits = { plain: 1_000, gzip: 4_000 };
    expect(listTooLargeMessage(2_000, false, limits)).toMatch(/about 2000 orders.*uncompressed.*\(1000\): send "Accept-Encoding: gzip"/);
    expect(listTooLargeMessage(2_000, true, limits)).toMatch(/\(4000 with gzip\): read it in pages with GET \/v2\/store\/orders/);
    expect(listTooLargeMessage(5_000, false, limits)).toMatch(/\(4000 with gzip\): read it in pages with GET \/v2\/store\/orders/);
  });
});
