/**
 * The read side of API keys, what the authorizer needs: the bearer token's form, the hash, the
 * public key id and the lookup. Issuing, listing and revoking keys: infra/ops/key-store.ts.
 */
import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '../../shared/zod.ts';
import { callDeadline, type Deadline, type TableRef, toServiceError } from '../../shared/dynamo.ts';

/** RFC 6750 b64token: the characters a bearer token may hold. */
export const bearerTokenPattern = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * `Authorization` header values the gateway lets through to the authorizer: RFC 7235
 * `credentials = auth-scheme 1*SP token68` with the scheme `Bearer` in any case (RFC 7235 §2.1:
 * schemes are case-insensitive) and the key in RFC 6750's b64token alphabet. The deployed stack
 * hands `.source` to API Gateway as the TOKEN authorizer's validation expression, whose regex
 * dialect AWS does not name: so no flags, and only what JavaScript and Java regexes read alike.
 */
export const authorizationHeaderPattern = /^[Bb][Ee][Aa][Rr][Ee][Rr] +[A-Za-z0-9\-._~+/]+=*$/;

/**
 * What the key tool issues after a stage's prefix (infra/ops/key-store.ts, generateApiKey): 32
 * random bytes in base64url, 43 characters. A deployed stage holds no key of any other form.
 */
const issuedKeyBody = '[A-Za-z0-9_-]{43}';
const issuedKeyBodyPattern = new RegExp(`^${issuedKeyBody}$`);

/** The prefixes the stages give their keys (`so_live_`): letters and underscores, so they stand for themselves in a regex. */
const keyPrefixPattern = /^[a-z]+_[a-z]+_$/;

/**
 * The `Authorization` values a stage's gateway lets through to the authorizer (API Gateway's
 * identity validation expression; the local gateway's check). Where the stage holds only issued
 * keys: a bearer key of that stage's form (its prefix, then 43 base64url characters); any other
 * value, a key of the other stage included, is answered 401 by the gateway itself.
 */
export const authorizationPatternFor = (stage: { readonly onlyIssuedKeys: boolean; readonly keyPrefix: string }): RegExp => {
  if (!stage.onlyIssuedKeys) return authorizationHeaderPattern;
  if (!keyPrefixPattern.test(stage.keyPrefix)) throw new Error(`${stage.keyPrefix} is not a key prefix (letters, "_", letters, "_")`);
  return new RegExp(`^[Bb][Ee][Aa][Rr][Ee][Rr] +${stage.keyPrefix}${issuedKeyBody}$`);
};

/** The shortest key the local run takes as STORE_API_KEY (those the key tool issues are longer). */
export const shortestKey = 16;

/**
 * Whether a bearer token can be a key of a stage whose keys start with `keyPrefix`; without a prefix
 * (the local run, whose STORE_API_KEY may be any bearer token) every token of `shortestKey` or more can.
 */
export const canBeStageKey = (token: string, keyPrefix: string | undefined): boolean =>
  keyPrefix === undefined
    ? token.length >= shortestKey
    : token.startsWith(keyPrefix) && issuedKeyBodyPattern.test(token.slice(keyPrefix.length));

/** The key from an `Authorization: Bearer <key>` header, or undefined if the header is not of that form. */
export const bearerToken = (header: string | undefined): string | undefined =>
  header !== undefined && authorizationHeaderPattern.test(header) ? header.slice('bearer'.length).trimStart() : undefined;

/**
 * `arn:aws:execute-api:region:account:api/stage/METHOD/path` → the same API and stage, any
 * method and path: API Gateway caches the policy per token, so one Allow must cover both operations.
 */
export const wholeApiArn = (methodArn: string): string => {
  // The API id ends the first part (`…:account:apiId`), so the stage is the second.
  const [api, stage] = methodArn.split('/');
  return `${api}/${stage}/*/*`;
};

/** `arn:aws:execute-api:…:apiId/stage/DELETE/v1/store/orders/7` → the method and path it names. */
export const methodAndPathOf = (methodArn: string): { method: string; path: string } => {
  const [, , method = '', ...path] = methodArn.split('/');
  return { method, path: `/${path.join('/')}` };
};

/**
 * Seconds from `now` (ms since the epoch) until the next 00:00 UTC, when API Gateway starts a
 * key's daily quota afresh (a usage plan's DAY quota counts per UTC day), at least 1.
 */
export const secondsUntilQuotaReset = (now: number = Date.now()): number => {
  const day = 86_400_000;
  return Math.max(1, Math.ceil((day - (now % day)) / 1000));
};

/** Only this hash of a key is ever stored or compared. */
export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** A short public handle for a key (safe to show and log): part of its hash, never the key. */
export const keyIdOf = (keyHash: string): string => `key_${keyHash.slice(0, 16)}`;

export const usageKeyPattern = /^[0-9a-f]{64}$/;

export const apiKeyItemSchema = z.object({
  keyHash: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  keyId: z.string(),
  name: z.string(),
  createdAt: z.string(),
  revokedAt: z.optional(z.string()),
  /** The limit tier (infra/stage-config.ts); absent on keys issued before tiers: the stage's default tier. */
  tier: z.optional(z.string()),
  /** The usage identifier (see generateUsageKey); absent on keys issued before usage plans. */
  usageKey: z.optional(z.string().check(z.regex(usageKeyPattern))),
});
export type ApiKeyItem = z.infer<typeof apiKeyItemSchema>;

/** The stored record of an active key with this value, or undefined (unknown, revoked or malformed item). */
export const findActiveKey = async (table: TableRef, key: string, deadline: Deadline = callDeadline()): Promise<ApiKeyItem | undefined> => {
  try {
    const { Item } = await table.client.send(new GetCommand({ TableName: table.tableName, Key: { keyHash: hashApiKey(key) } }), deadline());
    const parsed = apiKeyItemSchema.safeParse(Item);
    return parsed.success && parsed.data.revokedAt === undefined ? parsed.data : undefined;
  } catch (error) {
    throw toServiceError(error);
  }
};
