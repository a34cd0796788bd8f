/**
 * The write side of API keys: issuing, listing, moving and revoking them (npm run keys, npm start,
 * tests). The functions only read keys (functions/authorizer/api-keys.ts), so none of this ships.
 */
import { randomBytes } from 'node:crypto';
import { PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type ApiKeyItem, apiKeyItemSchema, hashApiKey, keyIdOf } from '../../functions/authorizer/api-keys.ts';
import type { TableRef } from '../../shared/dynamo.ts';

/** A new key: the stage prefix (so a leaked key is recognisable) and 256 random bits. */
export const generateApiKey = (prefix: string): string => `${prefix}${randomBytes(32).toString('base64url')}`;

/**
 * A key's usage identifier: the API Gateway API key value the authorizer returns as
 * `usageIdentifierKey`, which puts the key's requests under its tier's usage plan. A random
 * value of its own, never derived from the bearer key (API Gateway stores it in clear); hex,
 * as API Gateway describes key values as alphanumeric, 20 to 128 characters.
 */
export const generateUsageKey = (): string => randomBytes(32).toString('hex');

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
