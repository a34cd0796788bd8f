/**
 * The published contract's vocabulary: the wire forms of the records the code uses (Order, Error)
 * built from the very zod schemas the functions validate with (shared/schemas.ts), and the shape of
 * one operation's part of the published contract. Each operation states its part in its contract
 * module (`functions/<operation>/contract.ts`, `published`); infra/openapi/document.ts builds the
 * OpenAPI document from both, and infra/openapi/cli.ts is `npm run openapi`.
 */
import * as z from 'zod';
import type * as core from 'zod/v4/core';
import type { ErrorCode } from '../shared/errors.ts';
import * as shipped from '../shared/schemas.ts';
import { INT32_MAX, INT32_MIN } from '../shared/schemas.ts';

/** A response header as the document describes it. */
export type HeaderObject = { description: string; required?: boolean; schema: Record<string, unknown> };

/** A zod/mini object schema rebuilt by fullZod: full zod's methods, the same fields. */
type FullObject<Shape> = z.ZodObject<{ [K in keyof Shape]: z.ZodType<core.output<Shape[K]>, core.input<Shape[K]>> }>;

/**
 * The schemas the functions use are zod/mini (shared/schemas.ts: a small bundle, a quick cold
 * start); zod-to-openapi reads full zod's methods and getters (`meta()`, `minLength`, `format`).
 * This rebuilds a zod/mini schema as the full zod class of the same name from the same
 * definition (ZodMiniString → ZodString, same checks and bounds), so the document is still
 * generated from the very schemas the code validates with.
 */
export function fullZod<Shape extends core.$ZodShape>(schema: core.$ZodObject<Shape>): FullObject<Shape>;
export function fullZod<T extends core.$ZodType>(schema: T): z.ZodType<core.output<T>, core.input<T>>;
export function fullZod(schema: core.$ZodType): z.ZodType {
  const { constr } = schema._zod;
  const def = schema._zod.def as unknown as Record<string, unknown>;
  const Full = (z as unknown as Record<string, new (def: object) => z.ZodType>)[constr.name.replace(/^ZodMini/, 'Zod')];
  if (Full === undefined) throw new Error(`fullZod: no full zod class for ${constr.name}`);
  const rebuilt = { ...def };
  for (const key of ['innerType', 'in', 'out', 'element'] as const)
    if (def[key] !== undefined) rebuilt[key] = fullZod(def[key] as core.$ZodType);
  if (def.shape !== undefined)
    rebuilt.shape = Object.fromEntries(Object.entries(def.shape as core.$ZodShape).map(([name, field]) => [name, fullZod(field)]));
  return new Full(rebuilt);
}

const orderSchema = fullZod(shipped.orderSchema);
const errorRecordSchema = fullZod(shipped.errorRecordSchema);
const int64Text = fullZod(shipped.int64Text);

/**
 * The wire form of an int64. Internally it stays exact decimal text (zod validates it as
 * such); on the wire it is a JSON integer written from that text, so it is documented as one.
 * No minimum/maximum: int64 is the bound, not JavaScript's 2^53.
 */
export const wireInt64 = (description: string) => int64Text.meta({ type: 'integer', format: 'int64', description });

/** The Order record on the wire: the code's orderSchema with numbers as JSON integers. */
export const orderWireSchema = orderSchema
  .extend({
    id: wireInt64('Unique order identifier.'),
    petId: wireInt64('Identifier of the animal in the order.'),
    quantity: orderSchema.shape.quantity.meta({
      type: 'integer',
      format: 'int32',
      // int32 bounds are safe JavaScript numbers: they can be written as such.
      minimum: Number(INT32_MIN),
      maximum: Number(INT32_MAX),
      description: 'Number of units ordered.',
    }),
    shipDate: orderSchema.shape.shipDate.meta({ description: 'Expected or actual ship date (RFC 3339 date-time).' }),
    complete: orderSchema.shape.complete.meta({ description: 'Whether the order has been fulfilled.' }),
    status: orderSchema.shape.status.meta({
      description:
        'State of the order: `pending`, `shipped`, `cancelled`, or another value written by the store’s other systems. ' +
        'Added to the specification’s Order so that a cancelled order can be told from a pending one; clients that ignore it lose nothing.',
    }),
  })
  // The specification's Order has no required fields (this service always sends `id`).
  .partial()
  .meta({
    id: 'Order',
    description:
      'An order of the store. `id` and `petId` are int64: values above 2^53 − 1 occur, so parse them without rounding ' +
      "(see docs/api.md#a-typescript-client in the service's repository). Clients should ignore fields they do not know.",
  });

export const errorWireSchema = errorRecordSchema
  .extend({
    code: errorRecordSchema.shape.code.meta({
      description: 'Machine-readable error code (snake_case); each response lists its possible values.',
    }),
    message: errorRecordSchema.shape.message.meta({ description: 'Human-readable description of the error.' }),
    status: errorRecordSchema.shape.status.meta({ format: 'int32', description: 'The HTTP status code of the response.' }),
  })
  .meta({ id: 'Error', description: 'Every error answer, from the service and from the API gateway itself.' });

/** What a route's handler answers; the gateway's own answers are added to every route. */
export type PublishedOperation = {
  readonly description: string;
  /** Schemas of the `{name}` segments of the route's path. */
  readonly pathParameters?: Readonly<Record<string, z.ZodType>>;
  /** Schemas of the query parameters the operation reads (all optional); others are ignored. */
  readonly queryParameters?: Readonly<Record<string, z.ZodType>>;
  readonly success: {
    readonly status: 200 | 201 | 204;
    readonly description: string;
    readonly body?: z.ZodType;
    readonly headers?: Readonly<Record<string, HeaderObject>>;
  };
  /** Error codes the handler itself can answer with (checked against the handler code by a test). */
  readonly errors: readonly ErrorCode[];
};
