import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { run } from '../../infra/keys.ts';
import { apiKeysTableKey, ensureTable } from '../../infra/local/tables.ts';
import { stages } from '../../infra/stage-config.ts';
import { findActiveKey } from '../../shared/api-keys.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { createTestTables, dynamoDbEndpoint } from '../support.ts';

const keys = async (...argv: string[]) => {
  const lines: string[] = [];
  await run(argv, (line) => lines.push(line));
  return lines;
};

describe('npm run keys', () => {
  it('creates a key shown once, lists it without the key, and revokes it', async () => {
    const { apiKeys } = await createTestTables();
    const target = ['--endpoint', dynamoDbEndpoint(), '--table', apiKeys.tableName];
    const created = await keys('create', '--name', 'checkout service', ...target);
    const key = created.at(-1)!;
    expect(key).toMatch(/^so_local_[A-Za-z0-9_-]{43}$/);
    const keyId = /Created key (key_[0-9a-f]+)/.exec(created[0]!)?.[1];
    expect(await findActiveKey(apiKeys, key)).toMatchObject({ keyId, name: 'checkout service' });

    const listed = await keys('list', ...target);
    expect(listed).toEqual([expect.stringMatching(new RegExp(`^${keyId}\\t.+\\tactive\\tcheckout service$`))]);
    expect(listed.join('\n')).not.toContain(key);

    expect((await keys('revoke', keyId!, ...target))[0]).toContain(`Revoked ${keyId}`);
    expect(await findActiveKey(apiKeys, key)).toBeUndefined();
    expect((await keys('list', ...target))[0]).toMatch(/\trevoked 20\d\d-/);
  });

  it("issues a deployed stage's key into that stage's table, with the stage's prefix", async () => {
    const client = createDocumentClient({ endpoint: dynamoDbEndpoint() });
    await ensureTable(client, stages.staging.apiKeysTableName, apiKeysTableKey);
    const created = await keys('create', '--stage', 'staging', '--name', 'first client', '--endpoint', dynamoDbEndpoint());
    const key = created.at(-1)!;
    expect(key.startsWith('so_test_')).toBe(true);
    expect(created[0]).toContain(`in ${stages.staging.apiKeysTableName} (staging)`);
    expect(await findActiveKey({ client, tableName: stages.staging.apiKeysTableName }, key)).toBeDefined();
  });

  it.each([
    [['create'], /create needs --name/],
    [['revoke'], /revoke needs the key id/],
    [['rotate'], /unknown command "rotate"/],
    [['list', '--stage', 'dev'], /--stage must be one of staging, production/],
    [['list', '--table', 'x'], /table name "x" must be 3-255 characters/],
    [['list', '--endpoint', 'not a url'], /--endpoint must be a URL/],
  ])('refuses %j with a usage message', async (argv, message) => {
    await expect(keys(...argv)).rejects.toThrow(message);
  });

  it('exits 2 on a usage error and 1 when DynamoDB is unreachable, printing no stack trace', () => {
    const cli = (...argv: string[]) => spawnSync(process.execPath, ['infra/keys.ts', ...argv], { encoding: 'utf8' });
    const usage = cli('revoke');
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain('keys: revoke needs the key id');
    const down = cli('list', '--endpoint', 'http://127.0.0.1:9');
    expect(down.status).toBe(1);
    expect(down.stderr).toContain('cannot reach DynamoDB');
    expect(down.stderr).not.toMatch(/\n\s+at /);
  });
});
