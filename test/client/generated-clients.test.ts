/**
 * The published contract as a client developer meets it, against one `npm start` (the real local
 * service, its own tables in the run's DynamoDB Local):
 *
 * - clients generated from docs/openapi.json with @hey-api/openapi-ts and orval exactly as
 *   docs/api.md#generated-clients-hey-api-and-orval says (its code blocks, in order), generated and
 *   compiled once, each run on Node 24 (the project's) and Node 20 (/usr/bin/node): they list, read
 *   every v2 page and cancel 2^53 + 1, int64's maximum and −(2^53 + 1); the store, read back,
 *   holds exactly those orders cancelled;
 * - every example of the document is an answer the service gives (./openapi-examples.ts);
 * - a Stoplight Prism validating proxy in front of the service finds no answer outside the
 *   contract, int64 aside: Prism holds `format: int64` to ±(2^53 − 1) and re-serialises bodies
 *   through JavaScript numbers, so its findings on ids beyond that are checked again, digit for
 *   digit, by the tests' own contract check on the same answer from the service (test/lib/openapi-contract.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putOrders } from '../../infra/local/seed.ts';
import { exampleOrders } from '../../infra/openapi/examples.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { orderToJson } from '../../shared/order-json.ts';
import type { Order } from '../../shared/schemas.ts';
import { dynamoDbEndpoint } from '../lib/local-api.ts';
import { codeBlocks, section } from '../lib/markdown.ts';
import { type ServiceProcess, startServiceProcess, stopServiceProcess, uniqueTables } from '../lib/service-process.ts';
import { checkExamples, headersOf } from '../lib/openapi-examples.ts';
import { checkThroughPrism } from '../lib/openapi-prism.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const key = 'so_local_generated-clients-0123456789';
const cursorSecrets = JSON.stringify({ current: 'generated-clients-test-cursor-key-000000000' });
const recipe = section(await readFile(join(repoRoot, 'docs/api.md'), 'utf8'), '### Generated clients: hey-api and orval');
const blocks = codeBlocks(recipe).map((block) => ({ ...block, file: /^\/\/ ([\w.-]+\.(?:ts|mjs))\b/.exec(block.code)?.[1] }));
const pinned = (JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> })
  .devDependencies;

/** The orders each client cancels, and the neighbours a rounded id would hit instead. */
const targets = ['9007199254740993', '9223372036854775807', '-9007199254740993'];
const seed: Order[] = [
  ...targets.map((id) => ({ id, petId: '9007199254740993', status: 'pending' })),
  { id: '9007199254740992', status: 'pending' },
  { id: '-9007199254740992', status: 'pending' },
  { id: '5', petId: '105', status: 'placed' },
  { id: '7', petId: '9223372036854775807', status: 'shipped' },
  ...exampleOrders,
];
const seedIds = seed.map((order) => order.id);

const nodes = [
  { name: 'Node 24', bin: process.execPath },
  ...(existsSync('/usr/bin/node') || process.env.CI ? [{ name: 'Node 20', bin: '/usr/bin/node' }] : []),
];
const programs = blocks.filter((block) => block.language === 'ts').map((block) => block.file!);

type Run = { code: number | null; output: string };
/** A command in `cwd` with `nodeBin`'s folder first on the PATH; never throws. */
const run = (command: string, args: string[], cwd: string, nodeBin: string, env: Record<string, string> = {}) =>
  new Promise<Run>((done) =>
    execFile(
      command,
      args,
      { cwd, timeout: 300_000, env: { ...process.env, ...env, PATH: `${dirname(nodeBin)}:${process.env.PATH}` } },
      (error, stdout, stderr) =>
        done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: `${stdout}${stderr}` }),
    ),
  );

describe('the published contract, as a client developer meets it', () => {
  let work: string;
  let service: ServiceProcess;
  let tables: ReturnType<typeof uniqueTables>;
  const documentClient = () => createDocumentClient({ endpoint: dynamoDbEndpoint() });
  const ordersTable = () => ({ client: documentClient(), tableName: tables.ORDERS_TABLE });
  const env = () => ({ STORE_ORDERS_URL: service.url!, STORE_API_KEY: key, STORE_ORDERS_PORT: new URL(service.url!).port });
  /** Every stored order: id → its item as text (numbers as their digits). */
  const store = async () => {
    const { Items = [] } = await documentClient().send(new ScanCommand({ TableName: tables.ORDERS_TABLE }));
    const digits = (value: unknown) => (typeof value === 'object' && value !== null && 'value' in value ? String(value.value) : value);
    return new Map(
      Items.map((item) => [String(digits(item.id)), Object.fromEntries(Object.entries(item).map(([k, v]) => [k, digits(v)]))]),
    );
  };

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'generated-clients-'));
    const seedFile = join(work, 'seed.json');
    await writeFile(seedFile, `[${seed.map((order) => orderToJson(order)).join(',')}]`);
    tables = uniqueTables('generated-clients');
    service = await startServiceProcess('npm', {
      DYNAMODB_ENDPOINT: dynamoDbEndpoint(),
      STORE_API_KEY: key,
      SEED_FILE: seedFile,
      CURSOR_SECRETS: cursorSecrets,
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      ...tables,
    });
    expect(service.url, service.output()).toBeDefined();
  }, 600_000);
  afterAll(async () => {
    if (service) await stopServiceProcess(service);
    if (work) await rm(work, { recursive: true, force: true });
  });

  describe('clients generated as docs/api.md says', () => {
    let project: string;

    beforeAll(async () => {
      // A new ESM TypeScript project; its packages are the repository's pinned ones (node_modules linked).
      project = join(work, 'orders-app');
      await run('mkdir', [project], work, process.execPath);
      await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'orders-app', private: true, type: 'module' }));
      await writeFile(
        join(project, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { target: 'es2022', module: 'nodenext', strict: true, skipLibCheck: true, types: ['node'] } }),
      );
      await symlink(join(repoRoot, 'node_modules'), join(project, 'node_modules'));
      await copyFile(join(repoRoot, 'docs/openapi.json'), join(project, 'openapi.json'));
      // The blocks in order: files written, commands run (generation on the project's Node: the generators need 22.18+).
      for (const block of blocks) {
        if (block.file !== undefined) await writeFile(join(project, block.file), block.code);
        if (block.language !== 'sh') continue;
        for (const line of block.code.trim().split('\n')) {
          const install = /^npm install --save-dev (\S+)@(\S+)$/.exec(line);
          // Installed already: the pin the recipe names is the repository's.
          if (install !== null) expect(pinned[install[1]!], line).toBe(install[2]);
          else {
            const ran = await run('bash', ['-e', '-c', line], project, process.execPath);
            expect(ran.code, `${line}\n${ran.output}`).toBe(0);
          }
        }
      }
      const compiled = await run('npx', ['tsc', '-p', '.'], project, process.execPath);
      expect(compiled.code, compiled.output).toBe(0);
      // A bound on a hang: two generators and tsc take minutes on a busy 2-core machine.
    }, 900_000);

    it('gives a recipe for each generator: pinned installs, a generation command, a program', () => {
      expect(programs).toEqual(['hey-api.ts', 'orval.ts']);
      expect(recipe).toContain('npx @hey-api/openapi-ts -i ./openapi.json');
      expect(recipe).toContain('npx orval --config orval.config.mjs');
    });

    it.each(programs.flatMap((program) => nodes.map((node) => [program, node.name, node.bin] as const)))(
      '%s on %s lists every id exactly, reads every page once and cancels exactly the orders named',
      async (program, _name, bin) => {
        await putOrders(ordersTable(), seed);
        const ran = await run(bin, [program.replace(/\.ts$/, '.js'), ...targets], project, bin, env());
        expect(ran.code, ran.output).toBe(0);
        const lines = ran.output.trim().split('\n');
        const idsOf = (prefix: string) => lines.filter((line) => line.startsWith(`${prefix} `)).flatMap((line) => line.split(' ').slice(1));
        expect(idsOf('listed').sort()).toEqual([...seedIds].sort());
        const paged = idsOf('page');
        expect(paged.sort()).toEqual([...seedIds].sort());
        expect(lines.filter((line) => line.startsWith('page ')).length).toBeGreaterThan(1);
        expect(lines.filter((line) => line.startsWith('cancelled ')).sort()).toEqual(targets.map((id) => `cancelled ${id} 204`).sort());
        // Read back: the targets cancelled, every other order exactly as seeded.
        const stored = await store();
        for (const order of seed) {
          const item = stored.get(order.id);
          if (targets.includes(order.id)) expect(item, order.id).toMatchObject({ status: 'cancelled', cancelledAt: expect.any(String) });
          else expect(item, order.id).toEqual(order);
        }
        expect(stored.size).toBe(seed.length);
      },
    );
  });

  it('gives, for every example of the document, the answer it shows', async () => {
    await putOrders(ordersTable(), seed);
    await checkExamples({ url: service.url!, key, cursorSecrets });
  });

  it('does with requests what the document states: trailing slash, HEAD, OPTIONS, a repeated parameter', async () => {
    const root = service.url!.replace(/\/v1$/, '');
    const get = async (path: string, method = 'GET') => {
      const response = await fetch(`${root}${path}`, { method, headers: headersOf({ url: service.url!, key, cursorSecrets }, 'key') });
      return { status: response.status, text: await response.text() };
    };
    expect((await get('/v1/store/orders/')).status).toBe(200);
    for (const method of ['HEAD', 'OPTIONS'])
      for (const path of ['/v1/store/orders', '/v1/store/orders/7', '/v2/store/orders'])
        expect((await get(path, method)).status, `${method} ${path}`).toBe(404);
    // The last value counts.
    expect((await get('/v1/store/orders?stringIds=yes&stringIds=true')).text).toContain('"idStr":"9007199254740993"');
    expect((await get('/v2/store/orders?stringIds=true&stringIds=yes')).status).toBe(400);
    // v1 ignores a value it does not read, as it ignores unknown parameters.
    const ignored = await get('/v1/store/orders?stringIds=true&stringIds=yes');
    expect([ignored.status, ignored.text.includes('idStr')]).toEqual([200, false]);
  });

  it('answers within the contract behind a Prism validating proxy, int64 checked digit for digit', async () => {
    await putOrders(ordersTable(), seed);
    await checkThroughPrism({ url: service.url!, key, cursorSecrets, work });
  });
});
