/**
 * The client package as a store's developer gets it: `npm pack` in client/ (which builds it),
 * the tarball installed into an empty folder, and a plain JavaScript script there that lists and
 * cancels orders of `npm start` with exact ids, on the project's Node and on the machine's own
 * Node (20 here: the oldest the package supports), if it has one.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

describe('the packed client package, installed into an empty folder', () => {
  let service: ServiceProcess;
  let folder: string;
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'client-package-'));
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
    // npm pack runs the package's prepack (tsc): the tarball holds what was built from src/ now.
    await run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: join(repoRoot, 'client') });
    const tarball = (await readdir(work)).find((name) => name.endsWith('.tgz'))!;
    folder = join(work, 'app');
    await run('mkdir', [folder]);
    await writeFile(join(folder, 'package.json'), '{ "name": "app", "private": true, "type": "module" }\n');
    await run('npm', ['install', '--no-audit', '--no-fund', '--offline', join(work, tarball)], { cwd: folder });
    await writeFile(join(folder, 'app.js'), script);
  });
  afterAll(async () => {
    if (service) await stopServiceProcess(service);
    await rm(work, { recursive: true, force: true });
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

  const nodes = [process.execPath, ...(existsSync('/usr/bin/node') ? ['/usr/bin/node'] : [])];
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
