import { z } from 'zod';

/** int64 bounds, as decimal text: the only safe way to hold them in JavaScript. */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export const inInt64Range = (value: bigint) => value >= INT64_MIN && value <= INT64_MAX;

/** An integer written in base 10 with every digit kept (ids never pass through `number`). */
/** A JSON-style integer literal: optional minus, no leading zeros. */
export const integerPattern = /^-?(0|[1-9][0-9]*)$/;
export const integerText = z.string().regex(integerPattern, 'expected a base-10 integer');
// zod runs every check even after the regex failed: BigInt must only see integer text.
export const int64Text = integerText.refine(
  (text) => !integerPattern.test(text) || (text.length <= 20 && inInt64Range(BigInt(text))),
  'outside the int64 range',
);

/**
 * An order as this service holds it between DynamoDB and the client: numbers as exact
 * decimal text. `status` is not in the specification's Order; it is added so a client can
 * tell a cancelled order from a pending one (see docs/decisions.md).
 */
export const orderSchema = z.object({
  id: int64Text,
  petId: int64Text.optional(),
  quantity: integerText.optional(),
  shipDate: z.iso.datetime({ offset: true }).optional(),
  complete: z.boolean().optional(),
  status: z.string().min(1).optional(),
});
export type Order = z.infer<typeof orderSchema>;

/** Status values this service itself reads or writes. Other systems may write more. */
export const orderStatus = { pending: 'pending', shipped: 'shipped', cancelled: 'cancelled' } as const;

/** The Error record of the specification: every field required. */
export const errorRecordSchema = z.object({
  code: z.string(),
  message: z.string(),
  status: z.int(),
});
export type ErrorRecord = z.infer<typeof errorRecordSchema>;

/**
 * A stored item, read with lib-dynamodb's `wrapNumbers: true`: numbers arrive as
 * NumberValue objects whose `value` is the exact text DynamoDB holds.
 */
const storedNumber = z.preprocess(
  (value) => (typeof value === 'object' && value !== null && 'value' in value ? String(value.value) : value),
  z.string({ error: 'expected a number' }),
);
export const storedOrderSchema = z.object({
  id: storedNumber.pipe(int64Text),
  petId: storedNumber.pipe(int64Text).optional(),
  quantity: storedNumber.pipe(integerText).optional(),
  shipDate: orderSchema.shape.shipDate,
  complete: orderSchema.shape.complete,
  status: orderSchema.shape.status,
});

/**
 * One entry of a SEED_FILE. The file is parsed with integers kept as bigint (see
 * infra/local/seed.ts), so a quoted id is a type error, not silently accepted.
 */
const seedInt64 = z.bigint({ error: 'expected an integer' }).refine(inInt64Range, 'outside the int64 range');
export const seedOrderSchema = z
  .strictObject({
    id: seedInt64,
    petId: seedInt64.optional(),
    quantity: z.bigint({ error: 'expected an integer' }).optional(),
    shipDate: orderSchema.shape.shipDate,
    complete: orderSchema.shape.complete,
    status: orderSchema.shape.status,
  })
  .transform((entry): Order => {
    const { id, petId, quantity, ...rest } = entry;
    return {
      id: id.toString(),
      ...(petId === undefined ? {} : { petId: petId.toString() }),
      ...(quantity === undefined ? {} : { quantity: quantity.toString() }),
      ...rest,
    };
  });
