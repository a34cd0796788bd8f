import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { findActiveKey, hashApiKey } from '../../functions/authorizer/api-keys.ts';
import { createApiKey, listApiKeys, revokeApiKey } from '../../infra/ops/key-store.ts';
import { createTestTables } from '../lib/local-api.ts';

describe('API key store', () => {
  it('stores only the hash of a new key and finds the key by it', async () => {
    const { client, apiKeys } = await createTestTables();
    const { key, item } = await createApiKey(apiKeys, { name: 'mobile app', prefix: 'so_test_' });
    expect(key).toMatch(/^so_test_[A-Za-z0-9_-]{43}$/);
    expect(item.keyHash).toBe(hashApiKey(key));
    const raw = await client.send(new ScanCommand({ TableName: apiKeys.tableName }));
    expect(JSON.stringify(raw.Items)).not.toContain(key.slice('so_test_'.length));
    expect(await findActiveKey(apiKeys, key)).toMatchObject({ keyId: item.keyId, name: 'mobile app' });
  });

  it('does not find an unknown key', async () => {
    const { apiKeys } = await createTestTables();
    expect(await findActiveKey(apiKeys, 'so_test_unknownunknownunknown')).toBeUndefined();
  });

  it('does not find a revoked key, and keeps its record for audit', async () => {
    const { apiKeys } = await createTestTables();
    const { key, item } = await createApiKey(apiKeys, { name: 'partner', prefix: 'so_test_' });
    const revoked = await revokeApiKey(apiKeys, item.keyId, new Date('2026-11-21T00:00:00Z'));
    expect(revoked?.revokedAt).toBe('2026-11-21T00:00:00.000Z');
    expect(await findActiveKey(apiKeys, key)).toBeUndefined();
    expect(await listApiKeys(apiKeys)).toEqual([expect.objectContaining({ keyId: item.keyId, revokedAt: '2026-11-21T00:00:00.000Z' })]);
  });

  it('reports an unknown key id on revoke', async () => {
    const { apiKeys } = await createTestTables();
    expect(await revokeApiKey(apiKeys, 'key_doesnotexist')).toBeUndefined();
  });

  it('generates a different key every time', async () => {
    const { apiKeys } = await createTestTables();
    const keys = await Promise.all(Array.from({ length: 5 }, (_, i) => createApiKey(apiKeys, { name: `k${i}`, prefix: 'so_test_' })));
    expect(new Set(keys.map((k) => k.key)).size).toBe(5);
    expect(await listApiKeys(apiKeys)).toHaveLength(5);
  });
});
