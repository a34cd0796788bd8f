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
import { INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN } from '../shared/schemas.ts';
import { stringIdsParameter } from '../shared/order-json.ts';

/** A response header as the document describes it. */
export type HeaderObject = { description: string; required?: boolean; schema: Record<string, unknown>; example?: unknown };

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

/**
 * An int64 as the service writes it in text (`idStr`, `petIdStr`): JSON-style digits, no leading
 * zeros, no `+`, within int64 (the code's int64Text).
 */
const int64String = (description: string) =>
  z
    .string()
    .max(20)
    .regex(/^-?(0|[1-9][0-9]*)$/)
    .meta({ description });

const textOf = (field: string) =>
  `\`${field}\` as a decimal string, with every digit: sent only when the request asked for \`${stringIdsParameter}=true\`. ` +
  `Read it where a JSON parser rounds integers above 2^53 − 1 (JavaScript's \`JSON.parse\`), and send it back as it is.`;

/** The Order record on the wire: the code's orderSchema with numbers as JSON integers. */
export const orderWireSchema = orderSchema
  .extend({
    id: wireInt64('Unique order identifier.'),
    idStr: int64String(textOf('id')),
    petId: wireInt64('Identifier of the animal in the order.'),
    petIdStr: int64String(textOf('petId')),
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
      `(see docs/api.md#int64-ids in the service's repository), or ask for \`${stringIdsParameter}=true\` and read \`idStr\` and \`petIdStr\`. ` +
      'Clients should ignore fields they do not know.',
  });

export const errorWireSchema = errorRecordSchema
  .extend({
    code: errorRecordSchema.shape.code.meta({
      description: 'Machine-readable error code (snake_case); each response lists its possible values.',
    }),
    message: errorRecordSchema.shape.message.meta({ description: 'Human-readable description of the error.' }),
    status: errorRecordSchema.shape.status.meta({ format: 'int32', description: 'The HTTP status code of the response.' }),
  })
  // `ErrorRecord`, not `Error`: generators name the type after the schema, and `Error` would hide JavaScript's own.
  .meta({ id: 'ErrorRecord', description: 'Every error answer, from the service and from the API gateway itself.' });

/**
 * The decimal integers from `min` to `max` that optional leading zeros pad (`007`, `-0`), as one
 * regular expression: every length below the bounds' digit count, then each digit of the bound
 * in turn. With maxLength 64 it admits exactly the texts functions/cancel-order/order-id.ts reads.
 */
export const int64DecimalPattern = (min: bigint = INT64_MIN, max: bigint = INT64_MAX): string => {
  const digits = (low: number, high: number) => (low === high ? String(low) : `[${low}-${high}]`);
  // Shorter numbers, then: the bound's first i digits, a lower digit, any digits after (the last digit inclusive).
  const notAbove = (bound: string): string[] => [
    `[0-9]{1,${bound.length - 1}}`,
    ...[...bound].flatMap((digit, i) => {
      const last = i === bound.length - 1;
      const high = Number(digit) - (last ? 0 : 1);
      const rest = bound.length - i - 1;
      return high < 0 ? [] : [`${bound.slice(0, i)}${digits(0, high)}${rest === 0 ? '' : rest === 1 ? '[0-9]' : `[0-9]{${rest}}`}`];
    }),
  ];
  const positive = notAbove(max.toString());
  const negative = notAbove((-min).toString());
  // int64's bounds differ in their last digit only: the negative side adds what it has beyond the positive one.
  const extra = negative.filter((alternative) => !positive.includes(alternative));
  const side = (sign: string, alternatives: string[]) => `${sign}0*(?:${alternatives.join('|')})`;
  return `^(?:${side('-?', positive)}${extra.length === 0 ? '' : `|${side('-', extra)}`})$`;
};

/** The longest `orderId` the service reads (functions/cancel-order/order-id.ts); longer is 400 at once. */
export const orderIdMaxLength = 64;

/** The `orderId` path parameter: text, exactly as the service reads it. */
export const orderIdPathSchema = (description: string, examples: Record<string, { summary: string; value: string }>) =>
  z.string().max(orderIdMaxLength).regex(new RegExp(int64DecimalPattern())).meta({ description, param: { examples } });

/**
 * The opt-in of the text ids, one query parameter of the v1 list and of each v2 page: v2 refuses
 * any other value, v1 ignores it (v1 ignores every parameter it does not read; its changes are additive).
 */
export const stringIdsQuery = (otherValues: 'refused' | 'ignored') => ({
  [stringIdsParameter]: z
    .boolean()
    .optional()
    .meta({
      description:
        '`true`: each order also carries `idStr` and `petIdStr`, its int64 fields as decimal strings, for clients whose JSON ' +
        'parser rounds integers above 2^53 − 1. `false` or absent: it does not. ' +
        (otherValues === 'refused' ? 'Any other value is 400 `invalid_query_parameter`.' : 'Any other value is ignored, as `false`.'),
      example: true,
    }),
});

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
    /** Named examples of the body: answers the service gives (infra/openapi/examples.ts). */
    readonly examples?: Readonly<Record<string, { summary: string; value: unknown }>>;
    readonly headers?: Readonly<Record<string, HeaderObject>>;
  };
  /** Error codes the handler itself can answer with (checked against the handler code by a test). */
  readonly errors: readonly ErrorCode[];
};
