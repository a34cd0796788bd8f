/**
 * The client's readers of orders against its exact parser: the reader of the service's own form
 * (client/src/service-form.ts) and the `JSON.parse` path behind it give what `parseJsonExact`
 * gives, property order and -0 included, for every text the service writes and for those texts
 * broken or bent in any way; whatever they cannot vouch for goes to the exact parser.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonSyntaxError, parseJsonExact } from '../../client/src/json.ts';
import { parseOrdersJson } from '../../client/src/orders-json.ts';
import { int64Keys } from '../../client/src/order.ts';
import { readServiceForm } from '../../client/src/service-form.ts';
import { orderToJson } from '../../shared/order-json.ts';
import type { Order } from '../../shared/schemas.ts';

const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
/** Ids as they come: small, near 2^53 (where a double rounds), and anywhere in int64. */
const anId = fc.oneof(fc.nat(99_999).map(String), fc.bigInt({ min: 2n ** 53n - 3n, max: 2n ** 53n + 3n }).map(String), int64);
const utf16 = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)) });
/** Strings the service writes (ISO dates, one-word statuses) and any other, escapes and lone surrogates included. */
const aString = fc.oneof(
  fc.constantFrom('pending', 'shipped', 'cancelled', 'placed', '2026-01-01T00:00:00.000Z'),
  fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  utf16,
);
const anOrder: fc.Arbitrary<Order> = fc.record(
  {
    id: anId,
    petId: anId,
    quantity: fc.oneof(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map(String), fc.constant('-0')),
    shipDate: aString,
    complete: fc.boolean(),
    status: aString,
  },
  { requiredKeys: ['id'] },
);
/** A v2 page (with or without a cursor) or a v1 array, written by the service's own writer. */
const aServedText = fc
  .tuple(fc.array(anOrder, { maxLength: 6 }), fc.constantFrom('page', 'last page', 'array'), aString)
  .map(([orders, kind, cursor]) => {
    const list = `[${orders.map((order) => orderToJson(order)).join(',')}]`;
    if (kind === 'array') return list;
    return `{"orders":${list}${kind === 'page' ? `,"nextCursor":${JSON.stringify(cursor)}` : ''}}`;
  });

/** A value with its property order and -0 made visible to toStrictEqual. */
const shape = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(shape);
  if (typeof value === 'object' && value !== null) return Object.entries(value).map(([key, member]) => [key, shape(member)]);
  return Object.is(value, -0) ? '-0' : value;
};
/** What a reader makes of a text: its value's shape, or the class of what it threw. */
const outcome = (read: () => unknown) => {
  try {
    return { value: shape(read()) };
  } catch (error) {
    return { threw: error instanceof JsonSyntaxError ? 'JsonSyntaxError' : String(error) };
  }
};
const exact = (text: string) => outcome(() => parseJsonExact(text, int64Keys));
const pageOrders = (value: unknown) => (Array.isArray(value) ? value : (value as { orders?: unknown } | null)?.orders);
const client = (text: string) => outcome(() => parseOrdersJson(text, int64Keys, pageOrders));

/** Edits that break or bend a text: JSON's own characters, members in and out of place, nesting, escapes, numbers in other forms. */
const token = fc.constantFrom(
  ...[' ', '\n', ',', ':', '"', '\\', '{', '}', '[', ']', '-', '0', '1', '.', 'e', 'E', '\u0001', 'é', '\ud800'],
  ...['"id":1', '"id":"1"', '"id":1.0', '"id":1e3', '"petId":01', '"petId":9223372036854775808', ',"id":7', ',"petId":null'],
  ...['{"id":2}', '{"id":2,"petId":"3"}', '"x":{"id":"3"}', '"x":[{"petId":1.5}]', '"\\u0069d":5', '"i\\u0064":"5"', '"__proto__":{}'],
);
const anEdit = fc.record({ at: fc.nat(), kind: fc.constantFrom('insert', 'delete', 'replace', 'copy'), token, length: fc.nat(12) });
const edit = (text: string, { at, kind, token, length }: { at: number; kind: string; token: string; length: number }) => {
  const i = at % (text.length + 1);
  if (kind === 'insert') return text.slice(0, i) + token + text.slice(i);
  if (kind === 'delete') return text.slice(0, i) + text.slice(i + length);
  if (kind === 'replace') return text.slice(0, i) + token + text.slice(i + Math.max(1, length % 3));
  return text.slice(0, i) + text.slice(i, i + length) + text.slice(i);
};

describe('the reader of the service`s own form', () => {
  it('reads every page and array the service writes, exactly as the exact parser does', () => {
    fc.assert(
      fc.property(aServedText, (text) => {
        const fast = readServiceForm(text);
        expect(fast).not.toBeUndefined();
        expect({ value: shape(fast) }).toStrictEqual(exact(text));
      }),
      { numRuns: 500 },
    );
  });

  it('gives up on a text broken or bent anywhere, or reads it as the exact parser does', () => {
    fc.assert(
      fc.property(aServedText, fc.array(anEdit, { minLength: 1, maxLength: 3 }), (served, edits) => {
        const text = edits.reduce(edit, served);
        const fast = readServiceForm(text);
        if (fast !== undefined) expect({ value: shape(fast) }).toStrictEqual(exact(text));
        // And the client as a whole: the same value, or the same error class.
        expect(client(text)).toStrictEqual(exact(text));
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    ['a nested object holding an id', '[{"id":1,"petId":2,"x":{"id":"3"}}]'],
    ['an order inside another order', '[{"id":1,"petId":2,"status":"pending","next":{"id":3,"petId":4.5}}]'],
    ['an id in the page around the orders', '{"orders":[{"id":1}],"id":1.0}'],
    ['an escaped key', '[{"id":1,"\\u0070etId":"2"}]'],
    ['a key written with an escape in the service`s place', '[{"\\u0069d":1,"petId":2}]'],
    ['a duplicate id whose last value is a fraction', '[{"id":1,"petId":2,"id":1.0}]'],
    ['a duplicate petId', '[{"id":1,"petId":2,"quantity":1,"petId":1e0}]'],
    ['petId before id', '[{"petId":"2","id":1}]'],
    ['a member past the service`s', '[{"id":1,"status":"pending","extra":{"petId":null}}]'],
    ['a raw control character in a string', '[{"id":1,"status":"a\u0001b"}]'],
    ['a bad escape', '[{"id":1,"status":"a\\x"}]'],
    ['a quantity past 15 digits', '[{"id":1,"quantity":1234567890123456789}]'],
    ['an id one past int64', '[{"id":9223372036854775808}]'],
    ['an id with a leading zero', '[{"id":012}]'],
  ])('leaves %s to the other readers, which answer as the exact parser does', (_what, text) => {
    expect(readServiceForm(text)).toBeUndefined();
    expect(client(text)).toStrictEqual(exact(text));
    const page = `{"orders":${text}}`;
    expect(readServiceForm(page)).toBeUndefined();
    expect(client(page)).toStrictEqual(exact(page));
  });

  it('refuses a raw control character in a string, as JSON.parse does, whichever reader reads the text', () => {
    // An escaped key sends the text straight to the exact parser; before, it took the control character.
    for (const text of ['[{"id":1,"status":"a\u0001b"}]', '[{"\\u0069d":1,"status":"a\u0001b"}]', '{"orders":[],"nextCursor":"\n"}'])
      expect(() => parseOrdersJson(text, int64Keys, pageOrders), text).toThrow(JsonSyntaxError);
  });

  it('reads escaped strings, lone surrogates, -0 and both ends of int64 itself', () => {
    const text =
      '{"orders":[{"id":-9223372036854775808,"petId":9223372036854775807,"quantity":-0,"shipDate":"a\\"b\\\\c\\u00e9","complete":false,"status":"\ud800"},{"id":0,"status":"pending"},{"id":9007199254740993,"status":"pending"}],"nextCursor":"x"}';
    const fast = readServiceForm(text);
    expect(fast).not.toBeUndefined();
    expect({ value: shape(fast) }).toStrictEqual(exact(text));
  });
});

describe('the JSON.parse path, for JSON the service did not write', () => {
  it('reads any such page of orders as the exact parser does, ids past 2^53 in any order and any of them absent', () => {
    fc.assert(
      fc.property(fc.array(anOrder, { maxLength: 8 }), fc.constantFrom(' ', '\n\t '), (orders, space) => {
        // Spaces (and members in another order) are not the service's form: the JSON.parse path reads them.
        const members = (order: Order) =>
          Object.entries(order)
            .reverse()
            .map(
              ([key, value]) =>
                `${JSON.stringify(key)}:${space}${key === 'id' || key === 'petId' || key === 'quantity' ? value : JSON.stringify(value)}`,
            );
        const text = `{"orders":[${orders.map((order) => `{${members(order).join(`,${space}`)}}`).join(`,${space}`)}]}`;
        if (orders.length > 0) expect(readServiceForm(text)).toBeUndefined();
        expect(client(text)).toStrictEqual(exact(text));
      }),
      { numRuns: 500 },
    );
  });
});
