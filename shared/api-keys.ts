import { createHash, randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from './zod.ts';
import { callDeadline, type Deadline, type TableRef, toServiceError } from './dynamo.ts';

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

/** Only this hash of a key is ever stored or compared. */
export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** A short public handle for a key (safe to show and log): part of its hash, never the key. */
export const keyIdOf = (keyHash: string): string => `key_${keyHash.slice(0, 16)}`;

/** A new key: the stage prefix (so a leaked key is recognisable) and 256 random bits. */
export const generateApiKey = (prefix: string): string => `${prefix}${randomBytes(32).toString('base64url')}`;

/**
 * A key's usage identifier: the API Gateway API key value the authorizer returns as
 * `usageIdentifierKey`, which puts the key's requests under its tier's usage plan. A random
 * value of its own, never derived from the bearer key (API Gateway stores it in clear); hex,
 * as API Gateway describes key values as alphanumeric, 20 to 128 characters.
 */
export const generateUsageKey = (): string => randomBytes(32).toString('hex');
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

/**
 * Stores the hash of a key under a name. Pass `key` to register a chosen value (the local
 * STORE_API_KEY); otherwise a new one is generated. The key itself is returned only here.
 */
export const createApiKey = async (
  table: TableRef,
  options: { name: string; prefix: string; tier?: string; key?: string; usageKey?: string; now?: Date },
): Promise<{ key: string; item: ApiKeyItem }> => {
  const key = options.key ?? generateApiKey(options.prefix);
  const keyHash = hashApiKey(key);
  const item: ApiKeyItem = {
    keyHash,
    keyId: keyIdOf(keyHash),
    name: options.name,
    createdAt: (options.now ?? new Date()).toISOString(),
    ...(options.tier === undefined ? {} : { tier: options.tier }),
    usageKey: options.usageKey ?? generateUsageKey(),
  };
  await table.client.send(new PutCommand({ TableName: table.tableName, Item: item, ConditionExpression: 'attribute_not_exists(keyHash)' }));
  return { key, item };
};

/** Every key record (hashes included; callers show only id, name and dates). The table is small. */
export const listApiKeys = async (table: TableRef): Promise<ApiKeyItem[]> => {
  const items: ApiKeyItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.client.send(new ScanCommand({ TableName: table.tableName, ExclusiveStartKey: startKey }));
    for (const item of page.Items ?? []) {
      const parsed = apiKeyItemSchema.safeParse(item);
      if (parsed.success) items.push(parsed.data);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
};

/** The record of the key with this public id (active or revoked), or undefined. */
export const findKeyById = async (table: TableRef, keyId: string): Promise<ApiKeyItem | undefined> =>
  (await listApiKeys(table)).find((candidate) => candidate.keyId === keyId);

/**
 * Puts an active key (its record, as the caller read it) in another tier, giving it a usage
 * identifier if it has none (a key issued before usage plans). A key revoked meanwhile is refused
 * by the condition.
 */
export const moveApiKey = async (table: TableRef, item: ApiKeyItem, change: { tier: string; usageKey: string }): Promise<ApiKeyItem> => {
  await table.client.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: { keyHash: item.keyHash },
      UpdateExpression: 'SET tier = :tier, usageKey = :usageKey',
      // Never a revoked key; never a usage identifier other than the one API Gateway was given.
      ConditionExpression:
        'attribute_exists(keyHash) AND attribute_not_exists(revokedAt) AND (attribute_not_exists(usageKey) OR usageKey = :usageKey)',
      ExpressionAttributeValues: { ':tier': change.tier, ':usageKey': change.usageKey },
    }),
  );
  return { ...item, ...change };
};

/** Marks a key revoked (the record is kept for audit). Returns undefined when no key has that id. */
export const revokeApiKey = async (table: TableRef, keyId: string, now: Date = new Date()): Promise<ApiKeyItem | undefined> => {
  const item = await findKeyById(table, keyId);
  if (item === undefined) return undefined;
  if (item.revokedAt !== undefined) return item;
  const revokedAt = now.toISOString();
  await table.client.send(
    new UpdateCommand({
      TableName: table.tableName,
      Key: { keyHash: item.keyHash },
      UpdateExpression: 'SET revokedAt = :now',
      ConditionExpression: 'attribute_exists(keyHash) AND attribute_not_exists(revokedAt)',
      ExpressionAttributeValues: { ':now': revokedAt },
    }),
  );
  return { ...item, revokedAt };
};
