import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../infra/local/dynamodb-local.ts';
import { drainMs } from '../../infra/local/gateway.ts';
import { listApiKeys, revokeApiKey } from '../../shared/api-keys.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { childPids, isRunning, type ServiceProcess, startServiceProcess } from '../service-process.ts';
import { dynamoDbEndpoint, request } from '../support.ts';

type Service = { child: ChildProcess; output: () => string; url?: string; exitCode?: number | null };

/** Runs `npm start`'s entry point as a real process and waits for its listening line (or its exit). */
const startService = async (env: Record<string, string | undefined>): Promise<Service> => {
  const { DYNAMODB_ENDPOINT, ORDERS_TABLE, API_KEYS_TABLE, PORT, SEED_FILE, STORE_API_KEY, DATA_DIR, ...inherited } = process.env;
  const child = spawn(process.execPath, ['infra/local/start.ts'], {
    env: { ...inherited, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => ({ exitCode: code as number | null }));
  const listening = new Promise<{ url: string }>((resolve) => {
    child.stdout?.on('data', () => {
      const url = /Store Orders API listening on (http:\/\/127\.0\.0\.1:\d+\/v1)\n/.exec(output)?.[1];
      if (url !== undefined) resolve({ url });
    });
  });
  const first = await Promise.race([listening, exited]);
  return { child, output: () => output, ...first };
};

const stop = async (service: Service, signal: NodeJS.Signals = 'SIGTERM') => {
  const exited = once(service.child, 'exit');
  service.child.kill(signal);
  const [code] = await exited;
  return code as number | null;
};

const tables = () => {
  const suffix = Math.random().toString(36).slice(2, 10);
  return { ORDERS_TABLE: `start-orders-${suffix}`, API_KEYS_TABLE: `start-keys-${suffix}` };
};

const key = 'local-test-key-0123456789';
const auth = { Authorization: `Bearer ${key}` };

const portAccepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(socket.destroy() !== undefined));
    socket.once('error', () => resolve(false));
  });

describe('npm start', () => {
  it('serves the demo orders with STORE_API_KEY, logs each request by its id without the key, and stops cleanly on SIGTERM', async () => {
    const service = await startService({
      DYNAMODB_ENDPOINT: dynamoDbEndpoint(),
      STORE_API_KEY: key,
      POWERTOOLS_LOG_LEVEL: 'INFO',
      ...tables(),
    });
    expect(service.url, service.output()).toBeDefined();
    const response = await request(service.url!, 'GET', '/store/orders', auth);
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(7);
    expect(response.text).toContain('"id":9223372036854775807');
    const refused = await request(service.url!, 'DELETE', '/store/orders/2', auth);
    const requestId = refused.headers.get('x-request-id');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const logLine = service
      .output()
      .split('\n')
      .find((line) => line.includes(`"request_id":"${requestId}"`) && line.includes('"message":"request completed"'));
    expect(JSON.parse(logLine ?? 'null')).toMatchObject({
      level: 'INFO',
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
    expect((await request(first.url!, 'DELETE', '/store/orders/1', auth)).status).toBe(204);
    await stop(first);
    const second = await startService({ DYNAMODB_ENDPOINT: dynamoDbEndpoint(), STORE_API_KEY: key, ...names });
    expect(second.output()).toContain(`Using existing table ${names.ORDERS_TABLE} (not seeded)`);
    const listed = (await request(second.url!, 'GET', '/store/orders', auth)).body as { id: number; status: string }[];
    expect(listed).toHaveLength(7);
    expect(listed.find((o) => o.id === 1)?.status).toBe('cancelled');
    await stop(second);
  });

  it('loads SEED_FILE instead of the demo orders, int64 ids exact', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'seed-'));
    const file = join(dir, 'orders.json');
    await writeFile(file, '[{"id": 9223372036854775807, "petId": 9007199254740993, "status": "pending"}, {"id": 8, "status": "shipped"}]');
    const service = await startService({ DYNAMODB_ENDPOINT: dynamoDbEndpoint(), STORE_API_KEY: key, SEED_FILE: file, ...tables() });
    const response = await request(service.url!, 'GET', '/store/orders', auth);
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
    ['a DYNAMODB_ENDPOINT that is not a URL', { DYNAMODB_ENDPOINT: 'localhost' }, undefined, /DYNAMODB_ENDPOINT must be a URL/],
    ['a table name DynamoDB would refuse', { ORDERS_TABLE: 'a' }, undefined, /ORDERS_TABLE must be 3-255 characters/],
  ])('refuses %s with a clear message and exit code 1', async (_, env: Record<string, string>, fileText, message) => {
    const dir = await mkdtemp(join(tmpdir(), 'seed-'));
    if (env.SEED_FILE !== undefined && fileText !== undefined) await writeFile(join(dir, env.SEED_FILE), fileText);
    const resolved = env.SEED_FILE === undefined ? env : { ...env, SEED_FILE: join(dir, env.SEED_FILE) };
    const service = await startService({ DYNAMODB_ENDPOINT: dynamoDbEndpoint(), ...tables(), ...resolved });
    expect(service.exitCode).toBe(1);
    expect(service.output()).toMatch(message);
    expect(service.output()).not.toMatch(/\n\s+at /);
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

  it('tells the developer to install Java when it is missing', async () => {
    const service = await startService({ PATH: '/nonexistent', ...tables() });
    expect(service.exitCode).toBe(1);
    expect(service.output()).toMatch(/DynamoDB Local needs Java 17 or newer.*DYNAMODB_ENDPOINT/s);
  });

  it('starts its own DynamoDB Local, prints a generated key that works, and leaves no Java process on SIGINT', async () => {
    const service = await startService({});
    expect(service.url, service.output()).toBeDefined();
    const generated = /API key \(generated for this run\): (so_local_\S+)/.exec(service.output())?.[1];
    expect(generated).toBeDefined();
    expect((await request(service.url!, 'GET', '/store/orders', { Authorization: `Bearer ${generated}` })).status).toBe(200);
    const dynamoPort = Number(/DynamoDB Local on http:\/\/127\.0\.0\.1:(\d+)/.exec(service.output())?.[1]);
    expect(await portAccepts(dynamoPort)).toBe(true);
    expect(await stop(service, 'SIGINT')).toBe(0);
    expect(await portAccepts(dynamoPort)).toBe(false);
  });
});

// Stopping: the signal reaching the npm process or the node process (issue 10). The service
// starts its own DynamoDB Local here, as a developer's npm start does.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const stopKey = 'local-shutdown-test-key-0123456789';
const stopAuth = { Authorization: `Bearer ${stopKey}` };

/** npm start → node (npm runs it with `exec`: no shell between) → java. */
const serviceProcesses = (service: ServiceProcess, via: 'npm' | 'node') => {
  const node = via === 'npm' ? childPids(service.child.pid!)[0]! : service.child.pid!;
  const java = childPids(node).find((pid) => pid !== undefined)!;
  return { node, java, port: Number(new URL(service.url!).port) };
};

/** What must hold once the service stopped: exit code 0, no Java, no listening port. */
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
    { timeout: 90_000 },
    async () => {
      const port = String(await freePort());
      const first = await startServiceProcess('npm', { PORT: port, STORE_API_KEY: stopKey });
      expect(first.url, first.output()).toBeDefined();
      const processes = serviceProcesses(first, 'npm');
      expect((await request(first.url!, 'GET', '/store/orders', stopAuth)).status).toBe(200);
      first.child.kill('SIGTERM');
      await expectStoppedCleanly(await first.exited, processes);

      const second = await startServiceProcess('npm', { PORT: port, STORE_API_KEY: stopKey });
      expect(second.url, second.output()).toBe(first.url);
      expect((await request(second.url!, 'GET', '/store/orders', stopAuth)).status).toBe(200);
      const again = serviceProcesses(second, 'npm');
      second.child.kill('SIGINT');
      await expectStoppedCleanly(await second.exited, again);
    },
  );

  it(
    'SIGTERM to the node process lets a cancel in flight finish with its answer before DynamoDB Local stops',
    { timeout: 60_000 },
    async () => {
      const service = await startServiceProcess('node', { STORE_API_KEY: stopKey });
      expect(service.url, service.output()).toBeDefined();
      const processes = serviceProcesses(service, 'node');
      expect((await request(service.url!, 'GET', '/store/orders', stopAuth)).status).toBe(200); // caches the key's Allow
      // Hold the cancel in flight: the database does not answer until it is resumed.
      process.kill(processes.java, 'SIGSTOP');
      const cancel = request(service.url!, 'DELETE', '/store/orders/1', stopAuth);
      const startedAt = Date.now();
      try {
        await sleep(300);
        service.child.kill('SIGTERM');
        await sleep(700);
        expect(await portAccepts(processes.port)).toBe(false); // no new connections while draining
      } finally {
        process.kill(processes.java, 'SIGCONT');
      }
      expect((await cancel).status).toBe(204);
      await expectStoppedCleanly(await service.exited, processes);
      // Generous "not hung" bound: the drain (5 s) plus DynamoDB Local's own stop.
      expect(Date.now() - startedAt).toBeLessThan(drainMs + 10_000);
      expect(service.output()).toContain('Stopping: requests in flight have up to 5 s to finish');
    },
  );
});
