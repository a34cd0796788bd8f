import {
  CreateSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, describe, expect, it } from 'vitest';
import { canaryKeySecret, canaryKeySecretName } from '../../shared/canary-key.ts';
import { run } from '../../infra/ops/keys.ts';
import { findActiveKey } from '../../functions/authorizer/api-keys.ts';
import { findKeyById } from '../../infra/ops/key-store.ts';
import { createTestTables, dynamoDbEndpoint } from '../lib/local-api.ts';
import { fakeApiGateway } from '../lib/fake-api-gateway.ts';

// Staging's API Gateway and Secrets Manager, faked (no local server exists for either); its keys table is DynamoDB Local's.
const gateway = fakeApiGateway([
  { name: 'store-orders-staging-standard', stage: 'staging' },
  { name: 'store-orders-staging-canary', stage: 'staging' },
]);
const secretsManager = mockClient(SecretsManagerClient);
const stored = new Map<string, string>();
secretsManager.on(GetSecretValueCommand).callsFake(({ SecretId }: { SecretId: string }) => {
  const value = stored.get(SecretId);
  if (value === undefined)
    throw new ResourceNotFoundException({ message: "Secrets Manager can't find the specified secret.", $metadata: {} });
  return { Name: SecretId, SecretString: value };
});
secretsManager.on(CreateSecretCommand).callsFake(({ Name, SecretString }: { Name: string; SecretString: string }) => {
  stored.set(Name, SecretString);
  return { Name };
});
secretsManager.on(PutSecretValueCommand).callsFake(({ SecretId, SecretString }: { SecretId: string; SecretString: string }) => {
  stored.set(SecretId, SecretString);
  return { Name: SecretId };
});
afterAll(() => (gateway.restore(), secretsManager.restore()));

describe('npm run keys -- canary', () => {
  it('issues a canary-tier key into the stage secret without printing it, and on a second run replaces and revokes it', async () => {
    const { apiKeys } = await createTestTables();
    const lines: string[] = [];
    const keys = (...argv: string[]) =>
      run([...argv, '--endpoint', dynamoDbEndpoint(), '--table', apiKeys.tableName], (line) => lines.push(line), { note: () => undefined });

    await keys('canary', '--stage', 'staging');
    const first = canaryKeySecret.parse(JSON.parse(stored.get(canaryKeySecretName('staging'))!));
    expect(await findActiveKey(apiKeys, first.key)).toMatchObject({
      keyId: first.keyId,
      tier: 'canary',
      usageKey: first.usageIdentifierKey,
    });
    expect(gateway.key(`store-orders-staging-${first.keyId}`)).toMatchObject({
      value: first.usageIdentifierKey,
      plans: ['store-orders-staging-canary'],
    });
    expect(first.key).toMatch(/^so_test_/);
    expect(lines.join('\n')).not.toContain(first.key);
    expect(lines).toEqual([
      expect.stringContaining(
        `Created canary key ${first.keyId} in tier canary and stored it in Secrets Manager as store-orders/staging/canary-key`,
      ),
    ]);

    await keys('canary', '--stage', 'staging');
    const second = canaryKeySecret.parse(JSON.parse(stored.get(canaryKeySecretName('staging'))!));
    expect(second.keyId).not.toBe(first.keyId);
    expect(await findActiveKey(apiKeys, second.key)).toMatchObject({ tier: 'canary' });
    expect((await findKeyById(apiKeys, first.keyId))?.revokedAt).toBeDefined();
    expect(lines.at(-1)).toContain(`Revoked the canary key it replaces, ${first.keyId}`);
  });

  it('needs a stage: locally there is no secret store to keep the key in', async () => {
    await expect(run(['canary'], () => undefined, { note: () => undefined })).rejects.toThrow(/canary needs --stage/);
  });
});
