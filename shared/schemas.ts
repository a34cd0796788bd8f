import * as z from './zod.ts';

/** int64 bounds, as decimal text: the only safe way to hold them in JavaScript. */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export const inInt64Range = (value: bigint) => value >= INT64_MIN && value <= INT64_MAX;

/** int32 bounds: `quantity` is an int32 in the Swagger petstore's Order, which the specification's Order comes from. */
export const INT32_MIN = -(2n ** 31n);
export const INT32_MAX = 2n ** 31n - 1n;

export const inInt32Range = (value: bigint) => value >= INT32_MIN && value <= INT32_MAX;

/** An integer written in base 10 with every digit kept (ids never pass through `number`). */
/** A JSON-style integer literal: optional minus, no leading zeros. */
export const integerPattern = /^-?(0|[1-9][0-9]*)$/;
export const integerText = z.string().check(z.regex(integerPattern, 'expected a base-10 integer'));
// zod runs every check even after the regex failed: BigInt must only see integer text.
const integerTextIn = (inRange: (value: bigint) => boolean, message: string) =>
  integerText.check(z.refine((text) => !integerPattern.test(text) || (text.length <= 20 && inRange(BigInt(text))), message));
export const int64Text = integerTextIn(inInt64Range, 'outside the int64 range');
export const int32Text = integerTextIn(inInt32Range, 'outside the int32 range');

/**
 * Length bounds of the strings the service sends (OWASP API4: a client can size its buffers).
 * A longer stored value breaks the table contract like any other bad field (see toOrder).
 */
export const stringBounds = {
  /** RFC 3339 with nanoseconds and an offset is 35 characters; only absurd fractions are longer. */
  shipDate: 64,
  /** The statuses in use are one word; other systems' values get room to spare. */
  orderStatus: 64,
  errorCode: 64,
  /** The longest message the code can produce is far shorter (test/unit/errors.test.ts). */
  errorMessage: 1024,
} as const;

/**
 * An order as this service holds it between DynamoDB and the client: numbers as exact
 * decimal text. `status` is not in the specification's Order; it is added so a client can
 * tell a cancelled order from a pending one (see docs/decisions.md).
 */
export const orderSchema = z.object({
  id: int64Text,
  petId: z.optional(int64Text),
  quantity: z.optional(int32Text),
  shipDate: z.optional(z.iso.datetime({ offset: true }).check(z.maxLength(stringBounds.shipDate))),
  complete: z.optional(z.boolean()),
  status: z.optional(z.string().check(z.minLength(1), z.maxLength(stringBounds.orderStatus))),
});
export type Order = z.infer<typeof orderSchema>;

/** Status values this service itself reads or writes. Other systems may write more. */
export const orderStatus = { pending: 'pending', shipped: 'shipped', cancelled: 'cancelled' } as const;

/** The Error record of the specification: every field required. */
export const errorRecordSchema = z.object({
  code: z.string().check(z.maxLength(stringBounds.errorCode), z.regex(/^[a-z][a-z0-9_]*$/)),
  message: z.string().check(z.minLength(1), z.maxLength(stringBounds.errorMessage)),
  // RFC 9110 §15: a status code outside 100..599 is invalid.
  status: z.int().check(z.gte(100), z.lte(599)),
});
export type ErrorRecord = z.infer<typeof errorRecordSchema>;

/**
 * A stored item, read with lib-dynamodb's `wrapNumbers: true`: numbers arrive as
 * NumberValue objects whose `value` is the exact text DynamoDB holds.
 */
const storedNumber = z.pipe(
  z.transform((value) => (typeof value === 'object' && value !== null && 'value' in value ? String(value.value) : value)),
  z.string({ error: 'expected a number' }),
);
export const storedOrderSchema = z.object({
  id: z.pipe(storedNumber, int64Text),
  petId: z.optional(z.pipe(storedNumber, int64Text)),
  quantity: z.optional(z.pipe(storedNumber, int32Text)),
  shipDate: orderSchema.shape.shipDate,
  complete: orderSchema.shape.complete,
  status: orderSchema.shape.status,
});

/**
 * What listing does with an item another system stored in a shape the contract forbids
 * (shared/order-items.ts `toOrders` makes it, shared/observability.ts reports it).
 */
export type InvalidItemReport = { id: unknown; fields: string[]; dropped: 'fields' | 'item' };
