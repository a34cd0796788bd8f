/**
 * The client package as a store's developer gets it: `npm pack` in client/ (which builds it),
 * the tarball installed into an empty folder, and plain JavaScript scripts there: one lists and
 * cancels orders of `npm start` with exact ids, another meets hostile servers (gzip bombs on v1 and
 * v2, a server that never answers, servers that echo the key, one that repeats its cursor) and
 * must end each call with a typed error within its bounds, the key in none, its process alive,
 * and its peak memory within a few times the bound it was given. On the project's Node and on the
 * machine's own Node (20 here: the oldest the package supports), if it has one.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HostileKind, hostileServer } from '../lib/hostile-servers.ts';
import { dynamoDbEndpoint } from '../lib/local-api.ts';
import { type ServiceProcess, startServiceProcess, stopServiceProcess, uniqueTables } from '../lib/service-process.ts';

const run = promisify(execFile);
const repoRoot = resolve(import.meta.dirname, '../..');
const key = 'so_local_client-package-test-key';

/** What the installed package's user writes: plain ESM JavaScript, the package's name, nothing of this repository. */
const script = `
import { StoreOrdersClient, ConflictError } from '@store-orders/client';
const client = new StoreOrdersClient({ baseUrl: process.argv[2], apiKey: process.argv[3] });
const before = [];
for await (const order of client.listOrders()) before.push(order);
await client.cancelOrder(9007199254740993n);
let conflict;
try { await client.cancelOrder(2n); } catch (error) { conflict = error instanceof ConflictError ? error.code : String(error); }
const after = [];
for await (const order of client.listOrders()) after.push(order);
const show = (orders) => orders.map((o) => ({ id: String(o.id), type: typeof o.id, status: o.status })).sort((a, b) => a.id.localeCompare(b.id));
console.log(JSON.stringify({ node: process.version, before: show(before), after: show(after), conflict }));
`;

const seed = [
  { id: 9007199254740993n, status: 'pending' },
  { id: 9007199254740992n, status: 'pending' },
  { id: 2n, status: 'shipped' },
];

let folder: string;
let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'client-package-'));
  // npm pack runs the package's prepack (tsc): the tarball holds what was built from src/ now.
  await run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: join(repoRoot, 'client') });
  const tarball = (await readdir(work)).find((name) => name.endsWith('.tgz'))!;
  folder = join(work, 'app');
  await run('mkdir', [folder]);
  await writeFile(join(folder, 'package.json'), '{ "name": "app", "private": true, "type": "module" }\n');
  await run('npm', ['install', '--no-audit', '--no-fund', '--offline', join(work, tarball)], { cwd: folder });
  await writeFile(join(folder, 'app.js'), script);
  await copyFile(join(import.meta.dirname, 'hostile-calls.mjs'), join(folder, 'hostile-calls.mjs'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const nodes = [process.execPath, ...(existsSync('/usr/bin/node') ? ['/usr/bin/node'] : [])];

describe('the packed client package, installed into an empty folder', () => {
  let service: ServiceProcess;
  beforeAll(async () => {
    const seedFile = join(work, 'seed.json');
    await writeFile(seedFile, `[${seed.map((order) => `{"id":${order.id},"status":"${order.status}"}`).join(',')}]`);
    service = await startServiceProcess('npm', {
      DYNAMODB_ENDPOINT: dynamoDbEndpoint(),
      STORE_API_KEY: key,
      SEED_FILE: seedFile,
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      ...uniqueTables('client-package'),
    });
    expect(service.url, service.output()).toBeDefined();
  });
  afterAll(async () => {
    if (service) await stopServiceProcess(service);
  });

  it('holds the built ESM, its declarations, README and LICENSE, and no source or runtime dependency; the project records the tarball', async () => {
    const installed = join(folder, 'node_modules/@store-orders/client');
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ name: '@store-orders/client', type: 'module', license: 'MIT' });
    expect(manifest.dependencies).toBeUndefined();
    for (const file of ['dist/index.js', 'dist/index.d.ts', 'dist/generated/openapi.d.ts', 'README.md', 'LICENSE'])
      expect(existsSync(join(installed, file)), file).toBe(true);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    // The store's project names the tarball, so no later install asks a registry for the name (docs/api.md: Installing it safely).
    const app = JSON.parse(await readFile(join(folder, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    expect(app.dependencies?.['@store-orders/client']).toMatch(/^file:.*store-orders-client-\d+\.\d+\.\d+\.tgz$/);
  });

  it.each(nodes)('lists and cancels with exact ids from a script in that folder (%s)', async (node) => {
    // Cancelled again on the second run: cancelling a cancelled order answers 204.
    const { stdout } = await run(node, ['app.js', service.url!, key], { cwd: folder });
    const result = JSON.parse(stdout) as { node: string; before: object[]; after: object[]; conflict: string };
    const order = (id: bigint, status: string) => ({ id: String(id), type: 'bigint', status });
    expect(result.after).toEqual([order(2n, 'shipped'), order(9007199254740992n, 'pending'), order(9007199254740993n, 'cancelled')]);
    expect(result.before).toHaveLength(3);
    expect(result.conflict).toBe('order_already_shipped');
  });
});

type Outcome = { kind: string; typed: boolean; name: string; code: string; limitBytes?: number; keyInError: boolean; ms: number };

describe('the packed client against hostile servers', () => {
  let hostile: Awaited<ReturnType<typeof hostileServer>>;
  beforeAll(async () => {
    hostile = await hostileServer();
  });
  afterAll(() => hostile?.close());
  const calls = async (node: string, ...args: string[]) => {
    const { stdout } = await run(node, ['hostile-calls.mjs', hostile.origin, key, ...args], { cwd: folder, maxBuffer: 1 << 20 });
    return stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  };

  const expected: Record<string, Partial<Outcome>> = {
    'v2-gzip-bomb': { name: 'ResponseTooLargeError', code: 'client_response_too_large', limitBytes: 16 * 1024 * 1024 },
    'v2-endless': { name: 'ResponseTooLargeError', code: 'client_response_too_large', limitBytes: 16 * 1024 * 1024 },
    'v1-endless-order': { name: 'ResponseTooLargeError', code: 'client_response_too_large', limitBytes: 16 * 1024 },
    'v1-gzip-bomb': { name: 'ResponseTooLargeError', code: 'client_response_too_large', limitBytes: 16 * 1024 },
    silent: { name: 'ConnectionError', code: 'client_connection_failed' },
    'echo-text': { name: 'InvalidResponseError', code: 'client_invalid_response' },
    'echo-record': { name: 'InternalServerError', code: 'internal_error' },
    'repeated-cursor': { name: 'InvalidResponseError', code: 'client_cursor_repeated' },
  };

  it.each(nodes)('ends every call with its typed error, no key in any, each request named, the process alive (%s)', async (node) => {
    hostile.seen.length = 0;
    // The script exits 0 (execFile rejects otherwise): no call took the process down.
    const [said, ...outcomes] = await calls(node, 'calls');
    const userAgent = said!.userAgent as string;
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(Object.keys(expected));
    for (const outcome of outcomes as Outcome[]) {
      expect(outcome, outcome.kind).toMatchObject({ typed: true, keyInError: false, ...expected[outcome.kind] });
    }
    // The server that never answers held the call for its idle bound (1 s here), not for Node's 300 s.
    expect((outcomes as Outcome[]).find((outcome) => outcome.kind === 'silent')!.ms).toBeGreaterThanOrEqual(1000);
    expect(userAgent).toMatch(/^store-orders-client\/\d+\.\d+\.\d+ node\/\d+\.\d+\.\d+$/);
    expect(new Set(hostile.seen.map((request) => request.headers['user-agent']))).toEqual(new Set([userAgent]));
    // The bombs were cut short: the client closed each of those connections.
    const bombs = hostile.seen.filter((request) => /bomb|endless/.test(request.kind));
    expect(await Promise.all(bombs.map((request) => request.closedEarly))).toEqual(bombs.map(() => true));
  });

  /** Peak RSS growth at most this many times the bound: the page or order text, and the chunks it came in. */
  const memoryRatio = 4;
  const limit = 32 * 1024 * 1024;
  it.each(['v2-gzip-bomb', 'v2-endless', 'v1-endless-order', 'v1-gzip-bomb'] satisfies HostileKind[])(
    `keeps peak memory within ${memoryRatio}× the bound it was given against %s (a process of its own)`,
    async (kind) => {
      const [outcome] = await calls(process.execPath, 'memory', kind, String(limit));
      expect(outcome).toMatchObject({ typed: true, code: 'client_response_too_large', limitBytes: limit });
      expect((outcome!.rssGrowth as number) / limit).toBeLessThanOrEqual(memoryRatio);
    },
  );
});
