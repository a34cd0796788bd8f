import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { run } from '../../infra/ops/keys.ts';
import { stages } from '../../infra/stage-config.ts';
import { findActiveKey, hashApiKey, keyIdOf } from '../../functions/authorizer/api-keys.ts';
import { findKeyById } from '../../infra/ops/key-store.ts';
import { createTestTables, dynamoDbEndpoint } from '../lib/local-api.ts';
import { fakeApiGateway } from '../lib/fake-api-gateway.ts';

// The staging stage's API Gateway, faked; its keys table is a fresh one in DynamoDB Local.
const gateway = fakeApiGateway([
  { name: 'store-orders-staging-standard', stage: 'staging' },
  { name: 'store-orders-staging-high', stage: 'staging' },
  // Another stage's plan of the same tier name pattern: never touched.
  { name: 'store-orders-production-standard', stage: 'production' },
]);
afterAll(() => gateway.restore());

const staging = async () => {
  const { apiKeys } = await createTestTables();
  const keys = async (...argv: string[]) => {
    const lines: string[] = [];
    await run([...argv, '--stage', 'staging', '--endpoint', dynamoDbEndpoint(), '--table', apiKeys.tableName], (line) => lines.push(line), {
      note: () => undefined,
    });
    return lines;
  };
  return { apiKeys, keys };
};

/** The key id and key of a `create` output. */
const created = (lines: string[]) => ({ keyId: /Created key (key_[0-9a-f]{16})/.exec(lines[0]!)![1]!, key: lines.at(-1)! });
const apiKeyName = (keyId: string) => `store-orders-staging-${keyId}`;

describe('npm run keys on a deployed stage keeps the keys table and API Gateway in step', () => {
  afterEach(() => gateway.before('CreateUsagePlanKey', async () => undefined));

  it("creates the API key with the key's own usage identifier, in the default tier's plan, before the table record", async () => {
    const { apiKeys, keys } = await staging();
    let recordedWhenJoining: unknown = 'not called';
    // What the authorizer would find at the moment the key joins its plan.
    gateway.before('CreateUsagePlanKey', async () => {
      const keyId = gateway.lastKeyName()!.slice('store-orders-staging-'.length);
      recordedWhenJoining = (await findKeyById(apiKeys, keyId)) ?? 'no record';
    });
    const { keyId, key } = created(await keys('create', '--name', 'checkout service'));

    const record = await findActiveKey(apiKeys, key);
    expect(record).toMatchObject({ keyId, tier: stages.staging.defaultTier, usageKey: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(gateway.key(apiKeyName(keyId))).toMatchObject({ value: record!.usageKey, plans: ['store-orders-staging-standard'] });
    // The usage identifier is not the key, nor derived from it.
    expect(record!.usageKey).not.toContain(key.slice('so_test_'.length));
    expect(record!.usageKey).not.toBe(hashApiKey(key));
    // When the key joined its plan, the authorizer could not accept it yet.
    expect(recordedWhenJoining).toBe('no record');
  });

  it('creates a key in the tier named by --tier and lists it with its tier', async () => {
    const { keys } = await staging();
    const { keyId } = created(await keys('create', '--name', 'partner', '--tier', 'high'));
    expect(gateway.key(apiKeyName(keyId))?.plans).toEqual(['store-orders-staging-high']);
    expect(await keys('list')).toEqual([expect.stringMatching(new RegExp(`^${keyId}\\t20\\S+\\thigh\\tactive\\tpartner$`))]);
  });

  it('refuses a tier the stage does not define, naming the tiers', async () => {
    const { keys } = await staging();
    await expect(keys('create', '--name', 'x', '--tier', 'unlimited')).rejects.toThrow(
      '--tier must be one of standard, high, canary (staging); got "unlimited"',
    );
    await expect(keys('move', 'key_0000000000000000')).rejects.toThrow('move needs --tier <tier> (one of standard, high, canary)');
  });

  it('reports a create that failed between API Gateway and the table, issues no key, and says to revoke the left-over API key before creating again', async () => {
    const { apiKeys, keys } = await staging();
    const before = gateway.keyCount();
    gateway.failOnce('CreateUsagePlanKey');
    const failure = await keys('create', '--name', 'flaky').catch((error: Error) => error);
    expect(failure).toBeInstanceOf(Error);
    const message = (failure as Error).message;
    const keyId =
      /create (key_[0-9a-f]{16}): step 3 of 4 \(add it to usage plan store-orders-staging-standard\) failed: Rate exceeded\./.exec(
        message,
      )?.[1];
    expect(keyId, message).toBeDefined();
    expect(message).toContain(`Done: find usage plan store-orders-staging-standard; create API key ${apiKeyName(keyId!)}.`);
    expect(message).toContain(`no key was issued`);
    expect(message).toContain(`npm run keys -- revoke ${keyId} --stage staging`);
    // A second create makes a new key id: it cannot finish this one, and the message does not pretend it would.
    expect(message).toContain('Then run create again for a new key (it does not reuse this one).');
    expect(message).not.toContain('Run the same command again to finish.');
    expect(message).not.toMatch(/so_test_/);
    expect(await findKeyById(apiKeys, keyId!)).toBeUndefined();
    expect(gateway.key(apiKeyName(keyId!))).toMatchObject({ plans: [] });

    // The left-over API key goes with revoke; running create again issues a working key.
    expect(await keys('revoke', keyId!)).toEqual([
      `No key ${keyId} in ${apiKeys.tableName}; removed its left-over API key ${apiKeyName(keyId!)}.`,
    ]);
    expect(gateway.key(apiKeyName(keyId!))).toBeUndefined();
    const again = created(await keys('create', '--name', 'flaky'));
    expect(await findActiveKey(apiKeys, again.key)).toMatchObject({ keyId: again.keyId });
    expect(gateway.key(apiKeyName(again.keyId))?.plans).toEqual(['store-orders-staging-standard']);
    expect(gateway.keyCount()).toBe(before + 1);
  });

  it('moves a key: out of its plan, into the new one, then the table; a move that fails halfway is finished by running it again', async () => {
    const { apiKeys, keys } = await staging();
    const { keyId, key } = created(await keys('create', '--name', 'mover'));
    gateway.failOnce('CreateUsagePlanKey');
    const failure = (await keys('move', keyId, '--tier', 'high').catch((error: Error) => error)) as Error;
    expect(failure.message).toContain(`move ${keyId}: step 4 of 5 (add it to usage plan store-orders-staging-high) failed: Rate exceeded.`);
    expect(failure.message).toContain('the key is in no usage plan: API Gateway refuses its requests (401) until the move is finished.');
    expect(gateway.key(apiKeyName(keyId))?.plans).toEqual([]);
    expect(await findActiveKey(apiKeys, key)).toMatchObject({ tier: 'standard' });

    const [moved] = await keys('move', keyId, '--tier', 'high');
    expect(moved).toBe(`Moved ${keyId} "mover" to tier high (staging). API Gateway now counts its requests under plan high.`);
    expect(gateway.key(apiKeyName(keyId))?.plans).toEqual(['store-orders-staging-high']);
    expect(await findActiveKey(apiKeys, key)).toMatchObject({ tier: 'high' });
    // Moving again changes nothing.
    await keys('move', keyId, '--tier', 'high');
    expect(gateway.key(apiKeyName(keyId))?.plans).toEqual(['store-orders-staging-high']);
  });

  it('gives a key issued before usage plans its usage identifier and plan on move', async () => {
    const { apiKeys, keys } = await staging();
    const key = 'so_test_issued-before-usage-plans-0000000000';
    const keyId = keyIdOf(hashApiKey(key));
    await apiKeys.client.send(
      new PutCommand({
        TableName: apiKeys.tableName,
        Item: { keyHash: hashApiKey(key), keyId, name: 'old', createdAt: '2026-01-01T00:00:00.000Z' },
      }),
    );
    expect(await keys('list')).toEqual([`${keyId}\t2026-01-01T00:00:00.000Z\tstandard (default)\tactive\told`]);
    await keys('move', keyId, '--tier', 'standard');
    const record = await findActiveKey(apiKeys, key);
    expect(record).toMatchObject({ tier: 'standard', usageKey: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(gateway.key(apiKeyName(keyId))).toMatchObject({ value: record!.usageKey, plans: ['store-orders-staging-standard'] });
  });

  it('adopts every active key issued before usage plans in one command, leaving revoked and current keys alone', async () => {
    const { apiKeys, keys } = await staging();
    const oldKey = async (key: string, revokedAt?: string) => {
      const keyId = keyIdOf(hashApiKey(key));
      await apiKeys.client.send(
        new PutCommand({
          TableName: apiKeys.tableName,
          Item: {
            keyHash: hashApiKey(key),
            keyId,
            name: 'old',
            createdAt: '2026-01-01T00:00:00.000Z',
            ...(revokedAt ? { revokedAt } : {}),
          },
        }),
      );
      return keyId;
    };
    const first = await oldKey('so_test_issued-before-usage-plans-1111111111');
    const second = await oldKey('so_test_issued-before-usage-plans-2222222222');
    const revoked = await oldKey('so_test_issued-before-usage-plans-3333333333', '2026-02-01T00:00:00.000Z');
    const { keyId: current } = created(await keys('create', '--name', 'current', '--tier', 'high'));

    expect((await keys('adopt')).sort()).toEqual(
      [`Adopted ${first} "old" into tier standard (staging).`, `Adopted ${second} "old" into tier standard (staging).`].sort(),
    );
    for (const keyId of [first, second]) expect(gateway.key(apiKeyName(keyId))?.plans).toEqual(['store-orders-staging-standard']);
    expect(gateway.key(apiKeyName(revoked))).toBeUndefined();
    expect(gateway.key(apiKeyName(current))?.plans).toEqual(['store-orders-staging-high']);
    expect(await keys('adopt')).toEqual([expect.stringContaining('nothing to adopt')]);
  });

  it('revokes in the table first, then removes the API key; a revoke that fails at API Gateway is finished by running it again', async () => {
    const { apiKeys, keys } = await staging();
    const { keyId, key } = created(await keys('create', '--name', 'leaver'));
    gateway.failOnce('DeleteApiKey');
    const failure = (await keys('revoke', keyId).catch((error: Error) => error)) as Error;
    expect(failure.message).toContain(`revoke ${keyId}: step 3 of 3 (delete API key ${apiKeyName(keyId)}) failed: Rate exceeded.`);
    expect(failure.message).toContain('the keys table has it revoked');
    expect(await findActiveKey(apiKeys, key)).toBeUndefined();
    expect(gateway.key(apiKeyName(keyId))?.plans).toEqual([]);

    expect((await keys('revoke', keyId))[0]).toMatch(new RegExp(`^Revoked ${keyId} "leaver" at 20`));
    expect(gateway.key(apiKeyName(keyId))).toBeUndefined();
    await expect(keys('move', keyId, '--tier', 'high')).rejects.toThrow(/was revoked at 20/);
  });

  it('says to deploy the stack when the tier has no usage plan, having written nothing', async () => {
    const { apiKeys, keys } = await staging();
    const apiKeysBefore = gateway.keyCount();
    gateway.deployPlans(false);
    try {
      const failure = (await keys('create', '--name', 'too early').catch((error: Error) => error)) as Error;
      expect(failure.message).toContain('step 1 of 4 (find usage plan store-orders-staging-standard) failed: no usage plan');
      expect(failure.message).toContain('deploy the staging stack first');
      expect(failure.message).toContain('State: nothing was written; no key was issued.');
      expect(await keys('list')).toEqual([`No keys in ${apiKeys.tableName} (staging).`]);
      expect(gateway.keyCount()).toBe(apiKeysBefore);
    } finally {
      gateway.deployPlans(true);
    }
  });
});
