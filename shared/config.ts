import * as z from './zod.ts';

/** DynamoDB's own rule for table names. */
export const tableName = z.string().check(z.regex(/^[A-Za-z0-9_.-]{3,255}$/, 'must be 3-255 characters of A-Z a-z 0-9 _ . -'));

/**
 * A whole number from `min` to `max`, written as plain digits: `1e3`, `0x10` or `4.0` are
 * refused rather than read as something the user did not write.
 */
export const integerSetting = (min: number, max: number) => {
  const message = `must be a whole number from ${min} to ${max}`;
  return z.pipe(
    z.pipe(z.string().check(z.regex(/^\d{1,9}$/, message)), z.transform(Number)),
    z.number().check(z.gte(min, message), z.lte(max, message)),
  );
};

/** Every environment variable a function reads. Each function picks the ones it needs. */
export const functionEnvSchema = z.object({
  ORDERS_TABLE: tableName,
  API_KEYS_TABLE: tableName,
  /** Parallel Scan segments for listOrders: more is faster on large tables, each costs a connection. */
  SCAN_SEGMENTS: z._default(integerSetting(1, 64), 4),
  /**
   * Items per Scan request of listOrders (every page is still read). Smaller pages bound the
   * list's memory and bring the first byte sooner; DynamoDB's own limit is 1 MB a page.
   */
  SCAN_PAGE_SIZE: z._default(integerSetting(1, 100_000), 1000),
  /**
   * The most orders one list answer may carry, uncompressed and gzip-compressed: a streamed
   * Lambda response is capped (200 MB), so a larger store is refused before the first byte.
   */
  LIST_MAX_ORDERS: integerSetting(1, 999_999_999),
  LIST_MAX_ORDERS_GZIP: integerSetting(1, 999_999_999),
  /** The list's leases: one item per list running, per key (functions/list-orders/list-leases.ts). */
  LIST_LEASES_TABLE: tableName,
  /**
   * Lists one key may run at once, by tier: `standard=2,high=4,unlimited=none,*=2` (`*`: a key whose
   * tier is not named; `none`: no per-key bound, the local developer's tier). Read into a Map, so
   * that a tier name from a key record never reaches Object.prototype.
   */
  LIST_CONCURRENT_PER_KEY: z.pipe(
    z.string().check(
      z.regex(/^(\*|[\w-]+)=(none|[1-9]\d{0,3})(,(\*|[\w-]+)=(none|[1-9]\d{0,3}))*$/, 'must be tier=count pairs, e.g. standard=2,*=2'),
      z.refine((text: string) => text.split(',').some((pair) => pair.startsWith('*=')), "must name the default tier's count (*=…)"),
    ),
    z.transform(
      (text: string) =>
        new Map(
          text.split(',').map((pair) => {
            const [tier, count] = pair.split('=') as [string, string];
            return [tier, count === 'none' ? ('none' as const) : Number(count)] as const;
          }),
        ),
    ),
  ),
  /** A list whose client has taken nothing of its answer for this many seconds is cut. */
  LIST_STALL_SECONDS: integerSetting(1, 900),
  /** The stage a function serves (`staging`, `production`, `local`): the v2 list binds its cursors to it. */
  STAGE_NAME: z.string().check(z.regex(/^[a-z][a-z0-9-]{0,31}$/, 'must be a stage name (a-z, 0-9, -)')),
  /** The Secrets Manager secret holding the v2 list's cursor keys (`{"current": …, "previous": …}`): deployed stages. */
  CURSOR_SECRET_ID: z.optional(z.string().check(z.minLength(1))),
  /** The cursor keys themselves, the same JSON: the local run only (npm start makes a random one), never a deployed stage. */
  CURSOR_SECRETS: z.optional(z.string().check(z.minLength(1))),
  /**
   * The authorizer's: the stage's key prefix (`so_live_`). A token that is not this prefix and 43
   * base64url characters is refused without a lookup. Unset locally: STORE_API_KEY may be any bearer token.
   */
  API_KEY_PREFIX: z.optional(z.string().check(z.regex(/^[a-z]+_[a-z]+_$/, 'must be a key prefix such as so_live_'))),
  /** Only set for local runs (DynamoDB Local); on Lambda the SDK finds DynamoDB itself. */
  DYNAMODB_ENDPOINT: z.optional(z.url()),
});

/** The variables one function reads, from functionEnvSchema: `functionEnv({ ORDERS_TABLE: true })`. */
export const functionEnv = <const Mask extends { [K in FunctionVariable]?: true }>(
  mask: Mask & Record<Exclude<keyof Mask, FunctionVariable>, never>,
) => z.pick(functionEnvSchema, mask);
type FunctionVariable = keyof typeof functionEnvSchema.shape;

/**
 * Reads and validates configuration once (call it at module scope, i.e. at cold start).
 * A missing or bad variable fails the cold start with a message that names it.
 */
export const readConfig = <Schema extends z.ZodMiniType>(schema: Schema, env: NodeJS.ProcessEnv = process.env): z.output<Schema> => {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`);
    throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }
  return result.data;
};
