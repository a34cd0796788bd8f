import { spawnSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeApiGateway } from '../lib/fake-api-gateway.ts';
import { resolveTarget, run } from '../../infra/ops/keys.ts';
import { type LocalState, writeLocalState } from '../../infra/local/local-state.ts';
import { apiKeysTableKey, ensureTable } from '../../infra/local/local-tables.ts';
import { localStage, stages } from '../../infra/stage-config.ts';
import { findActiveKey } from '../../functions/authorizer/api-keys.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { createTestTables, dynamoDbEndpoint } from '../lib/local-api.ts';

const keys = async (...argv: string[]) => {
  const lines: string[] = [];
  await run(argv, (line) => lines.push(line), { note: () => undefined });
  return lines;
};

/** A state file as a running `npm start` writes it. */
const stateFile = async (state: Partial<LocalState> = {}) => {
  const file = join(await mkdtemp(join(tmpdir(), 'state-')), 'npm-start.json');
  writeLocalState(
    {
      pid: process.pid,
      apiUrl: 'http://127.0.0.1:3999/v1',
      dynamoDbEndpoint: dynamoDbEndpoint(),
      ordersTable: 'orders',
      apiKeysTable: 'api-keys',
      authorizerCacheTtlSeconds: 300,
      startedAt: new Date().toISOString(),
      ...state,
    },
    file,
  );
  return file;
};

/** The pid of a process that has exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

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

  it("issues a deployed stage's key into that stage's table, with the stage's prefix, in the stage's default tier", async () => {
    const client = createDocumentClient({ endpoint: dynamoDbEndpoint() });
    await ensureTable(client, stages.staging.apiKeysTableName, apiKeysTableKey);
    // The stage's API Gateway side (tested in keys-api-gateway.test.ts), faked.
    const gateway = fakeApiGateway([{ name: 'store-orders-staging-standard', stage: 'staging' }]);
    try {
      const created = await keys('create', '--stage', 'staging', '--name', 'first client', '--endpoint', dynamoDbEndpoint());
      const key = created.at(-1)!;
      expect(key.startsWith('so_test_')).toBe(true);
      expect(created[0]).toContain(`in tier standard, in ${stages.staging.apiKeysTableName} (staging)`);
      expect(await findActiveKey({ client, tableName: stages.staging.apiKeysTableName }, key)).toMatchObject({ tier: 'standard' });
    } finally {
      gateway.restore();
    }
  });

  it('creates a local key in a tier, moves it to another, and writes only the table', async () => {
    const { apiKeys } = await createTestTables();
    const target = ['--endpoint', dynamoDbEndpoint(), '--table', apiKeys.tableName];
    const created = await keys('create', '--name', 'load client', '--tier', 'high', ...target);
    const keyId = /Created key (key_[0-9a-f]+) "load client" in tier high/.exec(created[0]!)?.[1];
    const key = created.at(-1)!;
    expect(await findActiveKey(apiKeys, key)).toMatchObject({ keyId, tier: 'high', usageKey: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const { usageKey } = (await findActiveKey(apiKeys, key))!;

    expect(await keys('move', keyId!, '--tier', 'unlimited', ...target)).toEqual([
      `Moved ${keyId} "load client" to tier unlimited (local, ${dynamoDbEndpoint()}). The new limits apply within the target's authorizer cache TTL.`,
    ]);
    // The usage identifier stays the key's own.
    expect(await findActiveKey(apiKeys, key)).toMatchObject({ tier: 'unlimited', usageKey });
    expect((await keys('list', ...target))[0]).toMatch(/\tunlimited\tactive\tload client$/);
    // Without --tier, the local default tier.
    const plain = await keys('create', '--name', 'plain', ...target);
    expect(await findActiveKey(apiKeys, plain.at(-1)!)).toMatchObject({ tier: localStage.defaultTier });
  });

  it('targets the running npm start recorded in the state file when nothing names a target', async () => {
    const { apiKeys } = await createTestTables();
    const file = await stateFile({ apiKeysTable: apiKeys.tableName, authorizerCacheTtlSeconds: 0 });
    const notes: string[] = [];
    const out: string[] = [];
    await run(['create', '--name', 'found it'], (line) => out.push(line), {
      env: { LOCAL_STATE_FILE: file },
      note: (line) => notes.push(line),
    });
    expect(notes).toEqual([`keys: table ${apiKeys.tableName} (the running npm start, ${dynamoDbEndpoint()})`]);
    expect(await findActiveKey(apiKeys, out.at(-1)!)).toMatchObject({ name: 'found it' });
  });

  it('prefers a flag or variable that names a target over the running npm start', async () => {
    const file = await stateFile({ apiKeysTable: 'from-state-file' });
    expect(resolveTarget({ table: 'from-flag' }, { LOCAL_STATE_FILE: file }).tableName).toBe('from-flag');
    expect(resolveTarget({}, { LOCAL_STATE_FILE: file, API_KEYS_TABLE: 'from-env' }).tableName).toBe('from-env');
    expect(resolveTarget({}, { LOCAL_STATE_FILE: file, DYNAMODB_ENDPOINT: 'http://127.0.0.1:8111' })).toMatchObject({
      endpoint: 'http://127.0.0.1:8111',
      tableName: 'api-keys',
    });
  });

  it('ignores a state file whose npm start is gone, and says it found no running npm start and how to name one', async () => {
    const file = await stateFile({ pid: deadPid(), apiKeysTable: 'from-dead-run', dynamoDbEndpoint: 'http://127.0.0.1:8111' });
    const target = resolveTarget({}, { LOCAL_STATE_FILE: file });
    expect(target).toMatchObject({ tableName: 'api-keys', endpoint: 'http://127.0.0.1:8000', label: 'local, http://127.0.0.1:8000' });
    expect(target.hint).toBe(
      `the default: no running npm start was found in ${file}. Start \`npm start\` first, or name the target with ` +
        '--endpoint <url> --table <name> (or DYNAMODB_ENDPOINT and API_KEYS_TABLE), or --stage',
    );
  });

  it('names the table and endpoint it tried when the table does not exist', async () => {
    await expect(keys('list', '--endpoint', dynamoDbEndpoint(), '--table', 'no-such-keys-table')).rejects.toThrow(
      `table no-such-keys-table at ${dynamoDbEndpoint()} does not exist (as named by the options and environment; ` +
        'to use another, name the target with --endpoint <url> --table <name>',
    );
  });

  it.each([
    [['create'], /create needs --name/],
    [['revoke'], /revoke needs the key id/],
    [['rotate'], /unknown command "rotate"/],
    [['move'], /move needs the key id/],
    [['move', 'key_0123456789abcdef'], /move needs --tier <tier> \(one of standard, high, canary, unlimited\)/],
    [['create', '--name', 'x', '--tier', 'gold'], /--tier must be one of standard, high, canary, unlimited \(local, .+\); got "gold"/],
    [['list', '--stage', 'dev'], /--stage must be one of staging, production/],
    [['list', '--table', 'x'], /table name "x" must be 3-255 characters/],
    [['list', '--endpoint', 'not a url'], /--endpoint must be a URL/],
  ])('refuses %j with a usage message', async (argv, message) => {
    await expect(keys(...argv)).rejects.toThrow(message);
  });

  it('exits 2 on a usage error and 1 when DynamoDB is unreachable, printing no stack trace', () => {
    const cli = (...argv: string[]) => spawnSync(process.execPath, ['infra/ops/keys.ts', ...argv], { encoding: 'utf8' });
    const usage = cli('revoke');
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain('keys: revoke needs the key id');
    const down = cli('list', '--endpoint', 'http://127.0.0.1:9');
    expect(down.status).toBe(1);
    expect(down.stderr).toContain('keys: failed: cannot reach DynamoDB for table api-keys at http://127.0.0.1:9');
    expect(down.stderr).not.toMatch(/\n\s+at /);
  });
});
