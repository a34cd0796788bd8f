import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { drainMs } from '../../infra/local/gateway.ts';
import { localEnvSchema } from '../../infra/local/start.ts';
import { apiKeysTableKey, ensureTable } from '../../infra/local/local-tables.ts';
import { findActiveKey, hashApiKey, keyIdOf } from '../../functions/authorizer/api-keys.ts';
import { listApiKeys, revokeApiKey } from '../../infra/ops/key-store.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import {
  childPids,
  isRunning,
  portAccepts,
  requestPastDeadlines,
  type ServiceProcess,
  startServiceProcess,
  stopServiceProcess,
  uniqueTables,
} from '../lib/service-process.ts';
import { dynamoDbEndpoint, request } from '../lib/local-api.ts';

// ERROR lines tell a DynamoDB deadline's 5xx from any other (requestPastDeadlines); a test may ask for more.
const startService = (env: Record<string, string | undefined>) => startServiceProcess('node', { POWERTOOLS_LOG_LEVEL: 'ERROR', ...env });

/** The first line of the service's output that `matches`, once it has printed it (a log line may follow its answer). */
const outputLine = async (service: ServiceProcess, matches: (line: string) => boolean) => {
  for (;;) {
    const line = service.output().split('\n').find(matches);
    if (line !== undefined || service.child.exitCode !== null) return line;
    await sleep(20);
  }
};
const stop = stopServiceProcess;
const tables = () => uniqueTables('start');

const repoRoot = resolve(import.meta.dirname, '../..');
const key = 'local-test-key-0123456789';
const auth = { Authorization: `Bearer ${key}` };

describe('npm start', () => {
  it('serves the demo orders with STORE_API_KEY, logs each request by its id without the key, and stops cleanly on SIGTERM', async () => {
    const service = await startService({
      DYNAMODB_ENDPOINT: dynamoDbEndpoint(),
      STORE_API_KEY: key,
      POWERTOOLS_LOG_LEVEL: 'INFO',
      ...tables(),
    });
    expect(service.url, service.output()).toBeDefined();
    const response = await requestPastDeadlines(service, 'GET', '/store/orders', auth);
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(7);
    expect(response.text).toContain('"id":9223372036854775807');
    const refused = await requestPastDeadlines(service, 'DELETE', '/store/orders/2', auth);
    const requestId = refused.headers.get('x-request-id');
    const logLine = await outputLine(
      service,
      (line) => line.includes(`"request_id":"${requestId}"`) && line.includes('"message":"request completed"'),
    );
    expect(JSON.parse(logLine ?? 'null')).toMatchObject({
      level: 'INFO',
      service: 'store-orders-local',
      operation: 'cancelOrder',
      order_id: '2',
      statusCode: 409,
      outcome: 'order_already_shipped',
    });
    expect(service.output()).not.toContain(key);
    expect(service.output()).not.toContain('Bearer');
    expect(await stop(service)).toBe(0);
  });

  it('never seeds a table it did not create: a restart keeps the data as it was', async () => {
    const names = tables();
    const first = await startService({ DYNAMODB_ENDPOINT: dynamoDbEndpoint(), STORE_API_KEY: key, ...names });
    expect((await requestPastDeadlines(first, 'DELETE', '/store/orders/1', auth)).status).toBe(204);
    await stop(first);
    const second = await startService({ DYNAMODB_ENDPOINT: dynamoDbEndpoint(), STORE_API_KEY: key, ...names });
    expect(second.output()).toContain(`Using existing table ${names.ORDERS_TABLE} (not seeded)`);
    const listed = (await requestPastDeadlines(second, 'GET', '/store/orders', auth)).body as { id: number; status: string }[];
    expect(listed).toHaveLength(7);
    expect(listed.find((o) => o.id === 1)?.status).toBe('cancelled');
    await stop(second);
  });

  it('loads SEED_FILE instead of the demo orders, int64 ids exact', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'seed-'));
    const file = join(dir, 'orders.json');
    await writeFile(file, '[{"id": 9223372036854775807, "petId": 9007199254740993, "status": "pending"}, {"id": 8, "status": "shipped"}]');
    const service = await startService({ DYNAMODB_ENDPOINT: dynamoDbEndpoint(), STORE_API_KEY: key, SEED_FILE: file, ...tables() });
    const response = await requestPastDeadlines(service, 'GET', '/store/orders', auth);
    expect(response.text).toContain('{"id":9223372036854775807,"petId":9007199254740993,"status":"pending"}');
    expect(response.body).toHaveLength(2);
    await stop(service);
  });

  it.each([
    ['a SEED_FILE that is not JSON', { SEED_FILE: 'bad.json' }, 'not { json', /SEED_FILE .*bad\.json: not valid JSON/],
    ['a SEED_FILE with a duplicate id', { SEED_FILE: 'dup.json' }, '[{"id": 1}, {"id": 1}]', /entry 1 \(id 1\) repeats the id of entry 0/],
    [
      'a SEED_FILE with a wrong type',
      { SEED_FILE: 'type.json' },
      '[{"id": 1, "quantity": "two"}]',
      /entry 0 \(id 1\): quantity: expected an integer/,
    ],
    ['a missing SEED_FILE', { SEED_FILE: 'missing.json' }, undefined, /SEED_FILE .*missing\.json: cannot be read \(ENOENT\)/],
    ['a PORT that is not a number', { PORT: 'eighty' }, undefined, /PORT must be a port number/],
    ['a PORT out of range', { PORT: '70000' }, undefined, /PORT must be a port number/],
    ['a short STORE_API_KEY', { STORE_API_KEY: 'short' }, undefined, /STORE_API_KEY must be at least 16 characters/],
    ['a STORE_API_KEY with a space', { STORE_API_KEY: 'has a space in it!!' }, undefined, /STORE_API_KEY may only hold/],
    [
      'an unknown STORE_API_KEY_TIER',
      { STORE_API_KEY_TIER: 'gold' },
      undefined,
      /STORE_API_KEY_TIER must be one of standard, high, canary, unlimited/,
    ],
    ['a DYNAMODB_ENDPOINT that is not a URL', { DYNAMODB_ENDPOINT: 'localhost' }, undefined, /DYNAMODB_ENDPOINT must be a URL/],
    ['a table name DynamoDB would refuse', { ORDERS_TABLE: 'a' }, undefined, /ORDERS_TABLE must be 3-255 characters/],
    ['SCAN_SEGMENTS of 0', { SCAN_SEGMENTS: '0' }, undefined, /SCAN_SEGMENTS must be a whole number from 1 to 64/],
    ['SCAN_SEGMENTS that is not a number', { SCAN_SEGMENTS: 'four' }, undefined, /SCAN_SEGMENTS must be a whole number from 1 to 64/],
    ['SCAN_PAGE_SIZE beyond its bound', { SCAN_PAGE_SIZE: '100001' }, undefined, /SCAN_PAGE_SIZE must be a whole number from 1 to 100000/],
    [
      'a negative AUTHORIZER_CACHE_TTL_SECONDS',
      { AUTHORIZER_CACHE_TTL_SECONDS: '-1' },
      undefined,
      /AUTHORIZER_CACHE_TTL_SECONDS must be a whole number from 0 to 3600/,
    ],
    [
      'AUTHORIZER_CACHE_TTL_SECONDS beyond an hour',
      { AUTHORIZER_CACHE_TTL_SECONDS: '3601' },
      undefined,
      /AUTHORIZER_CACHE_TTL_SECONDS must be a whole number from 0 to 3600/,
    ],
  ])('refuses %s with a clear message and exit code 1', async (_, env: Record<string, string>, fileText, message) => {
    const dir = await mkdtemp(join(tmpdir(), 'seed-'));
    if (env.SEED_FILE !== undefined && fileText !== undefined) await writeFile(join(dir, env.SEED_FILE), fileText);
    const resolved = env.SEED_FILE === undefined ? env : { ...env, SEED_FILE: join(dir, env.SEED_FILE) };
    const service = await startService({ DYNAMODB_ENDPOINT: dynamoDbEndpoint(), ...tables(), ...resolved });
    expect(service.exitCode).toBe(1);
    expect(service.output()).toMatch(message);
    expect(service.output()).not.toMatch(/\n\s+at /);
    // Refused before touching DynamoDB: nothing to undo, nothing half-seeded.
    expect(service.output()).not.toMatch(/Created table|Using existing table/);
  });

  it('caches an authorizer Allow for 300 s by default, as the deployed stages do, and says so', async () => {
    const service = await startService({ DYNAMODB_ENDPOINT: dynamoDbEndpoint(), STORE_API_KEY: key, ...tables() });
    expect(service.output()).toContain(
      'Authorizer cache 300 s (AUTHORIZER_CACHE_TTL_SECONDS; 0 turns it off): a revoked key keeps working up to 300 s',
    );
    await stop(service);
  });

  it('refuses a revoked key at once with AUTHORIZER_CACHE_TTL_SECONDS=0', async () => {
    const names = tables();
    const service = await startService({
      DYNAMODB_ENDPOINT: dynamoDbEndpoint(),
      STORE_API_KEY: key,
      AUTHORIZER_CACHE_TTL_SECONDS: '0',
      ...names,
    });
    expect(service.output()).toContain('Authorizer cache off (AUTHORIZER_CACHE_TTL_SECONDS=0)');
    expect((await requestPastDeadlines(service, 'GET', '/store/orders', auth)).status).toBe(200);
    const apiKeys = { client: createDocumentClient({ endpoint: dynamoDbEndpoint() }), tableName: names.API_KEYS_TABLE };
    const [local] = await listApiKeys(apiKeys);
    await revokeApiKey(apiKeys, local!.keyId);
    expect((await requestPastDeadlines(service, 'GET', '/store/orders', auth)).status).toBe(401);
    await stop(service);
  });

  it('refuses a STORE_API_KEY that was revoked, naming it', async () => {
    const names = tables();
    const first = await startService({ DYNAMODB_ENDPOINT: dynamoDbEndpoint(), STORE_API_KEY: key, ...names });
    await stop(first);
    const apiKeys = { client: createDocumentClient({ endpoint: dynamoDbEndpoint() }), tableName: names.API_KEYS_TABLE };
    const [local] = await listApiKeys(apiKeys);
    await revokeApiKey(apiKeys, local!.keyId);
    const second = await startService({ DYNAMODB_ENDPOINT: dynamoDbEndpoint(), STORE_API_KEY: key, ...names });
    expect(second.exitCode).toBe(1);
    expect(second.output()).toContain(`STORE_API_KEY was revoked in table ${names.API_KEYS_TABLE}`);
  });

  it('gives a STORE_API_KEY registered before usage identifiers (kept in DATA_DIR) one, in STORE_API_KEY_TIER, instead of a 401', async () => {
    const names = tables();
    const apiKeys = { client: createDocumentClient({ endpoint: dynamoDbEndpoint() }), tableName: names.API_KEYS_TABLE };
    await ensureTable(apiKeys.client, names.API_KEYS_TABLE, apiKeysTableKey);
    const keyHash = hashApiKey(key);
    await apiKeys.client.send(
      new PutCommand({
        TableName: names.API_KEYS_TABLE,
        Item: { keyHash, keyId: keyIdOf(keyHash), name: 'local (STORE_API_KEY)', createdAt: '2026-01-01T00:00:00.000Z' },
      }),
    );
    const service = await startService({ DYNAMODB_ENDPOINT: dynamoDbEndpoint(), STORE_API_KEY: key, ...names });
    expect(service.url, service.output()).toBeDefined();
    expect((await requestPastDeadlines(service, 'GET', '/store/orders', auth)).status).toBe(200);
    expect(await findActiveKey(apiKeys, key)).toMatchObject({ tier: 'unlimited', usageKey: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await stop(service)).toBe(0);
  });

  it('refuses a PORT that is in use before starting anything, naming the port and the PORT variable', async () => {
    const busy = createServer().listen(0, '127.0.0.1');
    await once(busy, 'listening');
    const port = (busy.address() as { port: number }).port;
    try {
      // No DYNAMODB_ENDPOINT: a late check would have started DynamoDB Local first.
      const service = await startService({ PORT: String(port), ...tables() });
      expect(service.exitCode).toBe(1);
      expect(service.output()).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(service.output()).toMatch(/with the PORT variable, e\.g\. `PORT=\d+ npm start`/);
      expect(service.output()).not.toContain('DynamoDB Local on');
    } finally {
      busy.close();
    }
  });

  // One start of its own DynamoDB Local serves both promises of a developer's plain `npm start`:
  // the data where DATA_DIR says, and a generated key that works (a JVM start each would cost seconds).
  it('starts its own DynamoDB Local with a relative DATA_DIR in the directory npm start was run from, prints a generated key that works, keeps the data there, and leaves no Java process on SIGINT', async () => {
    const caller = await mkdtemp(join(tmpdir(), 'caller-'));
    // What npm does: the script runs in the package root, INIT_CWD names the caller's directory.
    const service = await startService({ INIT_CWD: caller, DATA_DIR: 'nested/data' });
    expect(service.url, service.output()).toBeDefined();
    expect(service.output()).toContain(`(data in ${join(caller, 'nested/data')})`);
    const generated = /API key \(generated for this run\): (so_local_\S+)/.exec(service.output())?.[1];
    expect(generated).toBeDefined();
    const generatedAuth = { Authorization: `Bearer ${generated}` };
    expect((await requestPastDeadlines(service, 'GET', '/store/orders', generatedAuth)).status).toBe(200);
    expect((await requestPastDeadlines(service, 'DELETE', '/store/orders/1', generatedAuth)).status).toBe(204);
    const dynamoPort = Number(/DynamoDB Local on http:\/\/127\.0\.0\.1:(\d+)/.exec(service.output())?.[1]);
    expect(await portAccepts(dynamoPort)).toBe(true);
    expect(await stop(service, 'SIGINT')).toBe(0);
    expect(await portAccepts(dynamoPort)).toBe(false);
    // DynamoDB Local's database file, where the user asked for it (a restart reads it back).
    expect(existsSync(join(caller, 'nested/data/shared-local-instance.db'))).toBe(true);
    expect(existsSync(join(repoRoot, 'nested'))).toBe(false);
    // Private: key hashes, usage identifiers and orders are the owner's alone.
    expect((await stat(join(caller, 'nested/data'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(caller, 'nested/data/shared-local-instance.db'))).mode & 0o077).toBe(0);
  });

  it('refuses a DATA_DIR that is a file, naming the path, when run as `npm start` from another directory', async () => {
    const caller = await mkdtemp(join(tmpdir(), 'caller-'));
    await writeFile(join(caller, 'notes.txt'), 'not a folder');
    // The outer `npm test` leaves npm_* variables that would steer this npm; a user's shell has none.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_|INIT_CWD$)/i.test(name)));
    const result = spawnSync('npm', ['--prefix', repoRoot, 'start'], {
      cwd: caller,
      // Set and empty (= unset) wins over any setting in a developer's own .env.
      env: { ...env, ...Object.fromEntries(Object.keys(localEnvSchema.shape).map((name) => [name, ''])), DATA_DIR: 'notes.txt', PORT: '0' },
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`npm start: DATA_DIR ${join(caller, 'notes.txt')} is not a folder`);
    expect(`${result.stdout}${result.stderr}`).not.toContain('DynamoDB Local on');
  });

  it('refuses a .env holding STORE_API_KEY that other users may read, naming the file, and reads one that is private', async () => {
    const caller = await mkdtemp(join(tmpdir(), 'dotenv-'));
    const file = join(caller, '.env');
    // An invalid PORT beside the key: a start that got past the check stops at the configuration, before anything runs.
    await writeFile(file, '# copied from .env.example\nSTORE_API_KEY=dotenv-test-key-0123456789\nPORT=not-a-port\n', { mode: 0o644 });
    await chmod(file, 0o644);
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !(name in localEnvSchema.shape)));
    // As npm start runs: node reads .env from the folder it runs in before any of the service's code.
    const run = () =>
      spawnSync(process.execPath, ['--env-file-if-exists=.env', join(repoRoot, 'infra/local/start.ts')], {
        cwd: caller,
        env,
        encoding: 'utf8',
      });
    const open = run();
    expect(open.status).toBe(1);
    expect(open.stderr).toContain(
      `npm start: ${file} holds STORE_API_KEY and other users may read it (mode 0644): make it yours alone (\`chmod 600 ${file}\`)`,
    );
    await chmod(file, 0o600);
    const closed = run();
    expect(closed.status).toBe(1);
    expect(closed.stderr).toContain('Invalid configuration: PORT');
    expect(closed.stderr).not.toContain('.env');
  });

  it('refuses a DATA_DIR inside a file, naming the path', async () => {
    const caller = await mkdtemp(join(tmpdir(), 'caller-'));
    await writeFile(join(caller, 'notes.txt'), 'not a folder');
    const service = await startService({ INIT_CWD: caller, DATA_DIR: 'notes.txt/data' });
    expect(service.exitCode).toBe(1);
    expect(service.output()).toContain(
      `npm start: DATA_DIR ${join(caller, 'notes.txt/data')} cannot be created (a part of the path is a file)`,
    );
    expect(service.output()).not.toMatch(/\n\s+at /);
  });

  it('lets `npm run keys` find it on any endpoint and tables while it runs, and forgets it when it stops', async () => {
    const names = tables();
    const service = await startService({ DYNAMODB_ENDPOINT: dynamoDbEndpoint(), STORE_API_KEY: key, ...names });
    // The user's shell: no DYNAMODB_ENDPOINT or API_KEYS_TABLE, no flags; only the state file to go by.
    const { DYNAMODB_ENDPOINT, API_KEYS_TABLE, ...shell } = process.env;
    const keys = (...argv: string[]) =>
      spawnSync(process.execPath, ['infra/ops/keys.ts', ...argv], {
        env: { ...shell, LOCAL_STATE_FILE: service.stateFile },
        encoding: 'utf8',
      });
    const listed = keys('list');
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stderr).toContain(`keys: table ${names.API_KEYS_TABLE} (the running npm start, ${dynamoDbEndpoint()})`);
    expect(listed.stdout).toMatch(/\tactive\tlocal \(STORE_API_KEY\)\n/);
    const keyId = listed.stdout.split('\t')[0]!;
    expect(keys('revoke', keyId).stdout).toContain(
      "Cached authorizations end within 300 s (the running npm start's AUTHORIZER_CACHE_TTL_SECONDS)",
    );

    expect(await stop(service)).toBe(0);
    expect(existsSync(service.stateFile)).toBe(false);
    expect(keys('list').stderr).toContain(`keys: table api-keys (local, http://127.0.0.1:8000)`);
  });

  it('tells the developer to install Java when it is missing', async () => {
    const service = await startService({ PATH: '/nonexistent', ...tables() });
    expect(service.exitCode).toBe(1);
    expect(service.output()).toMatch(/DynamoDB Local needs Java 17 or newer.*DYNAMODB_ENDPOINT/s);
  });
});

describe('.env', () => {
  it('.env.example lists every variable npm start reads, each commented out, so a copy changes nothing until edited', () => {
    const example = readFileSync(join(repoRoot, '.env.example'), 'utf8');
    const listed = [...example.matchAll(/^# ([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1]);
    expect(listed).toEqual(expect.arrayContaining(Object.keys(localEnvSchema.shape)));
    expect(listed.filter((name) => !(name! in localEnvSchema.shape))).toEqual(['POWERTOOLS_LOG_LEVEL', 'POWERTOOLS_METRICS_DISABLED']);
    expect(example.match(/^[A-Z]/gm)).toBeNull();
  });

  it('is read by npm start from the folder it runs in, a variable of the shell winning over the file', async () => {
    // package.json's start script, run where a `.env` is (npm runs it from the project folder).
    const script = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    const [command, ...args] = script.replace(/^exec /, '').split(' ');
    expect(command).toBe('node');
    const folder = await mkdtemp(join(tmpdir(), 'dotenv-'));
    await writeFile(join(folder, '.env'), 'PORT=eighty\nSCAN_SEGMENTS=0\n');
    const { PORT, SCAN_SEGMENTS, ...inherited } = process.env;
    const run = (env: Record<string, string>) =>
      spawnSync(
        process.execPath,
        args.map((arg) => (arg.endsWith('.ts') ? join(repoRoot, arg) : arg)),
        {
          cwd: folder,
          env: { ...inherited, ...env },
          encoding: 'utf8',
        },
      );
    const fromFile = run({});
    expect(fromFile.status).toBe(1);
    expect(fromFile.stderr).toContain('PORT must be a port number');
    const shellWins = run({ PORT: '0' });
    expect(shellWins.status).toBe(1);
    expect(shellWins.stderr).not.toContain('PORT');
    expect(shellWins.stderr).toContain('SCAN_SEGMENTS must be a whole number from 1 to 64');
  });
});

// Stopping: the signal reaching the npm process or the node process (issue 10). The service
// starts its own DynamoDB Local here, as a developer's npm start does.

const stopKey = 'local-shutdown-test-key-0123456789';
const stopAuth = { Authorization: `Bearer ${stopKey}` };

/** npm start → node (npm runs it with `exec`: no shell between) → java. */
const serviceProcesses = (service: ServiceProcess, via: 'npm' | 'node') => {
  const node = via === 'npm' ? childPids(service.child.pid!)[0]! : service.child.pid!;
  const java = childPids(node).find((pid) => pid !== undefined)!;
  const dynamoDbPort = Number(/DynamoDB Local on http:\/\/127\.0\.0\.1:(\d+)/.exec(service.output())?.[1]);
  return { node, java, port: Number(new URL(service.url!).port), dynamoDbPort };
};

/** What must hold once the service stopped: exit code 0, no Java, no listening port. */
/** Bytes received and not yet read by whatever listens on `port` on this machine (Linux /proc/net/tcp*, rx_queue). */
const unreadBytesAt = (port: number) =>
  ['/proc/net/tcp', '/proc/net/tcp6']
    .flatMap((file) => readFileSync(file, 'utf8').split('\n').slice(1))
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[3] === '01' && Number.parseInt(fields[1]?.split(':')[1] ?? '', 16) === port)
    .reduce((sum, fields) => sum + Number.parseInt(fields[4]!.split(':')[1]!, 16), 0);

const expectStoppedCleanly = async (exitCode: number | null, processes: ReturnType<typeof serviceProcesses>) => {
  expect(exitCode).toBe(0);
  expect(isRunning(processes.node)).toBe(false);
  expect(isRunning(processes.java)).toBe(false);
  expect(await portAccepts(processes.port)).toBe(false);
  // Its DynamoDB port is not checked: another test's DynamoDB Local may take it as soon as it is free.
};

describe('stopping npm start (SIGTERM, SIGINT)', () => {
  // Two starts of DynamoDB Local, a few seconds each on a busy machine: a longer test timeout.
  it(
    'SIGTERM to the npm process stops everything (exit 0, no Java, ports free), and the next npm start on the same port works',
    { timeout: 300_000 },
    async () => {
      // The port the system gave the first (PORT=0): a port found free and handed over could be taken meanwhile.
      const first = await startServiceProcess('npm', { STORE_API_KEY: stopKey, POWERTOOLS_LOG_LEVEL: 'ERROR' });
      expect(first.url, first.output()).toBeDefined();
      const port = new URL(first.url!).port;
      const processes = serviceProcesses(first, 'npm');
      expect((await requestPastDeadlines(first, 'GET', '/store/orders', stopAuth)).status).toBe(200);
      first.child.kill('SIGTERM');
      await expectStoppedCleanly(await first.exited, processes);

      const second = await startServiceProcess('npm', { PORT: port, STORE_API_KEY: stopKey, POWERTOOLS_LOG_LEVEL: 'ERROR' });
      expect(second.url, second.output()).toBe(first.url);
      expect((await requestPastDeadlines(second, 'GET', '/store/orders', stopAuth)).status).toBe(200);
      const again = serviceProcesses(second, 'npm');
      second.child.kill('SIGINT');
      await expectStoppedCleanly(await second.exited, again);
    },
  );

  it(
    'refuses a DATA_DIR a running npm start uses, naming both, and after a kill -9 of that start stops the DynamoDB Local it left and starts',
    { timeout: 300_000 },
    async () => {
      const dataDir = join(await mkdtemp(join(tmpdir(), 'orphan-')), 'data');
      const first = await startServiceProcess('node', { STORE_API_KEY: stopKey, DATA_DIR: dataDir, POWERTOOLS_LOG_LEVEL: 'ERROR' });
      expect(first.url, first.output()).toBeDefined();
      const processes = serviceProcesses(first, 'node');
      // Two DynamoDB Locals on one database file would corrupt it.
      const second = await startServiceProcess('node', { STORE_API_KEY: stopKey, DATA_DIR: dataDir, POWERTOOLS_LOG_LEVEL: 'ERROR' });
      expect(second.exitCode).toBe(1);
      expect(second.output()).toContain(
        `npm start: DATA_DIR ${dataDir} is in use by DynamoDB Local (pid ${processes.java}) of another npm start (pid ${processes.node})`,
      );
      // Killed outright, the service cannot stop its DynamoDB Local: it runs on.
      process.kill(processes.node, 'SIGKILL');
      await first.exited;
      expect(isRunning(processes.java)).toBe(true);
      const third = await startServiceProcess('node', { STORE_API_KEY: stopKey, DATA_DIR: dataDir, POWERTOOLS_LOG_LEVEL: 'ERROR' });
      try {
        expect(third.url, third.output()).toBeDefined();
        expect(third.output()).toContain(
          `Stopped DynamoDB Local (pid ${processes.java}, data in ${dataDir}): the npm start that ran it was killed`,
        );
        expect(isRunning(processes.java)).toBe(false);
        expect((await requestPastDeadlines(third, 'GET', '/store/orders', stopAuth)).status).toBe(200);
      } finally {
        expect(await stop(third)).toBe(0);
      }
    },
  );

  it(
    'SIGTERM to the node process lets a cancel in flight finish with its answer before DynamoDB Local stops',
    { timeout: 240_000 },
    async () => {
      const service = await startServiceProcess('node', { STORE_API_KEY: stopKey, POWERTOOLS_LOG_LEVEL: 'ERROR' });
      expect(service.url, service.output()).toBeDefined();
      const processes = serviceProcesses(service, 'node');
      expect((await requestPastDeadlines(service, 'GET', '/store/orders', stopAuth)).status).toBe(200); // caches the key's Allow
      // Hold the cancel in flight: the database does not answer until it is resumed.
      process.kill(processes.java, 'SIGSTOP');
      // Not sent again: the database is paused on purpose here.
      const cancel = request(service.url!, 'DELETE', '/store/orders/1', stopAuth);
      const startedAt = Date.now();
      try {
        // In flight once its UpdateItem waits, unread, at the paused database (no fixed delay: a busy machine is slower).
        while (unreadBytesAt(processes.dynamoDbPort) === 0) await sleep(20);
        service.child.kill('SIGTERM');
        // No new connections while draining: the listener closes as soon as the signal is handled.
        while (await portAccepts(processes.port)) await sleep(20);
      } finally {
        process.kill(processes.java, 'SIGCONT');
      }
      expect((await cancel).status).toBe(204);
      await expectStoppedCleanly(await service.exited, processes);
      // A "not hung" bound, not a speed target: the drain (5 s), DynamoDB Local's stop (SIGKILL
      // after 5 s), and room for a machine running two test suites at once.
      expect(Date.now() - startedAt).toBeLessThan(drainMs + 5_000 + 30_000);
      expect(service.output()).toContain('Stopping: requests in flight have up to 5 s to finish');
    },
  );
});
