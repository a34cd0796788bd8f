/**
 * `npm run smoke` as an engineer types it: against `npm start` (the known-answer suite of every
 * function, orders of its own cancelled and refused, found through npm start's state), against the
 * local service running a wrong release (each broken build of test/lib/broken-builds.ts fails,
 * naming its check), and against servers that answer nonsense or nothing.
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startServiceProcess, stopServiceProcess, uniqueTables } from '../lib/service-process.ts';
import { localStage, stages } from '../../infra/stage-config.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoDbEndpoint, startTestApi } from '../lib/local-api.ts';
import { brokenBuild, faults, withBrokenBuild } from '../lib/broken-builds.ts';
import { tempDir } from '../lib/cdk.ts';
import { demoOrders } from '../../infra/local/seed.ts';
import { writeLocalState } from '../../infra/local/local-state.ts';
import { registry } from '../../infra/registry.ts';

const key = 'smoke-test-local-key-0123456789';

/** `npm run smoke -- …` as an engineer types it, with STORE_API_KEY from `env` (asynchronously: the fake servers live in this process). */
const smoke = (args: string[], env: Record<string, string> = { STORE_API_KEY: key }) => {
  // A local API this process ran set the local runtime's AWS_LAMBDA_MAX_CONCURRENCY: it is not the child's.
  const { STORE_API_KEY, AWS_LAMBDA_MAX_CONCURRENCY, ...inherited } = process.env;
  return new Promise<{ status: number | null; output: string }>((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', 'smoke', '--', ...args],
      // No npm start's state unless the test names one: a developer's own npm start is not the server under test.
      { env: { ...inherited, LOCAL_STATE_FILE: join(tmpdir(), 'no-such-npm-start.json'), ...env }, timeout: 100_000 },
      (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : null, output: `${stdout}${stderr}` }),
    );
  });
};

/** A server that answers every request with `answer`, or never, to see the smoke test fail. */
const fakeServer = async (answer: ((res: ServerResponse) => void) | 'never') => {
  const server: Server = createServer((_req, res) => (answer === 'never' ? undefined : answer(res)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => (server.closeAllConnections(), server.close()),
  };
};

/** An HTTP proxy that answers 502 to everything and records what it was asked (method and target). */
const recordingProxy = async () => {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(502).end();
  });
  server.on('connect', (req, socket) => {
    requests.push(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    requests,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => (server.closeAllConnections(), server.close()),
  };
};

describe('npm run smoke', () => {
  let service: ServiceProcess;
  const tables = uniqueTables('smoke');
  beforeAll(async () => {
    service = await startServiceProcess('node', { DYNAMODB_ENDPOINT: dynamoDbEndpoint(), STORE_API_KEY: key, ...tables });
    expect(service.url, service.output()).toBeDefined();
  });
  afterAll(() => stopServiceProcess(service));
  /** The smoke check of the running npm start, found through its state file. */
  const againstService = (args: string[] = [], env: Record<string, string> = { STORE_API_KEY: key }) =>
    smoke(['--base-url', service.url!, ...args], { LOCAL_STATE_FILE: service.stateFile, ...env });
  const stored = async () => {
    const client = createDocumentClient({ endpoint: dynamoDbEndpoint() });
    try {
      const items = (await client.send(new ScanCommand({ TableName: tables.ORDERS_TABLE }))).Items ?? [];
      return items.map((item) => `${String(item.id)} ${String(item.status)}`).sort();
    } finally {
      client.destroy();
    }
  };

  it('passes against npm start: cancels a pending order of its own, is refused a shipped one, follows a cursor, and leaves the store as it was', async () => {
    const before = await stored();
    const { status, output } = await againstService();
    expect(output).toMatch(/^PASS {2}authorizer allows the key: 404 past the authorizer$/m);
    expect(output).toMatch(/^PASS {2}authorizer refuses a wrong key: 401 unauthorized, X-Request-Id \S+, WWW-Authenticate: Bearer$/m);
    expect(output).toMatch(/^PASS {2}v1 list: 200, 7 valid orders in \d+ bytes, each id once$/m);
    expect(output).toMatch(/^PASS {2}v1 list with gzip: 200 gzip, 7 valid orders in \d+ bytes, each id once$/m);
    expect(output).toMatch(
      /^PASS {2}cancel of a pending order, and again: order -92233720368547757\d\d: 204, X-Request-Id \S+, stored cancelled at \S+; again 204, unchanged$/m,
    );
    expect(output).toMatch(
      /^PASS {2}cancel of a shipped order: order -92233720368547757\d\d: 409 order_already_shipped, X-Request-Id \S+, stored shipped as it was$/m,
    );
    expect(output).toMatch(/^PASS {2}cancel of an absent order: order -9223372036854775808: 404 order_not_found/m);
    expect(output).toMatch(/^PASS {2}cancel of a malformed id: order not-an-order-id: 400 invalid_order_id/m);
    expect(output).toMatch(/^PASS {2}v2 pages of one through their cursors: 3 pages of one, 3 distinct orders: each cursor moved on$/m);
    expect(output).toMatch(/^PASS {2}v2 page filtered by status: 200, 4 orders, each pending, the last page$/m);
    expect(output).toMatch(/^PASS {2}v2 page filtered by ship date: 200, 0 orders, each shipped in /m);
    expect(output).toMatch(/^PASS {2}unknown route: 404 route_not_found/m);
    expect(output).toContain('All 12 checks passed.');
    expect(output).not.toContain(key);
    expect(status).toBe(0);
    // Its own orders are gone; no client's order was touched.
    expect(await stored()).toEqual(before);
  });

  it('passes with a key of the default tier, whose list limit refuses a second list at once: it waits as Retry-After says', async () => {
    const apiKeys = { client: createDocumentClient({ endpoint: dynamoDbEndpoint() }), tableName: tables.API_KEYS_TABLE };
    const { key: standardKey } = await createApiKey(apiKeys, { name: 'smoke', prefix: 'so_local_', tier: localStage.defaultTier });
    apiKeys.client.destroy();
    expect(stages.production.tiers[stages.production.defaultTier].listThrottling.burstLimit).toBe(1);
    const { status, output } = await againstService([], { STORE_API_KEY: standardKey });
    expect(output).toMatch(/^PASS {2}v1 list with gzip: 200 gzip, 7 valid orders/m);
    expect(output).toContain('All 12 checks passed.');
    expect(status).toBe(0);
  });

  it('with --list-bytes (as the canary runs it), stops reading each list after that much and checks the orders in it', async () => {
    const { status, output } = await againstService(['--list-bytes', '200']);
    expect(output).toMatch(/^PASS {2}v1 list: 200, the first [0-7] valid orders \(reading stopped after \d{3,} bytes\), each id once$/m);
    expect(output).toMatch(/^PASS {2}v1 list with gzip: 200 gzip, the first [0-7] valid orders/m);
    expect(output).toContain('All 12 checks passed.');
    expect(status).toBe(0);
    expect((await againstService(['--list-bytes', '0'])).output).toContain('--list-bytes must be a positive whole number');
  });

  it("with --stage, asks for a filtered page only where that stage's statusFilterChecks is on (as the pipeline runs it)", async () => {
    const { status, output } = await againstService(['--stage', 'staging']);
    const filtered = stages.staging.statusFilterChecks;
    expect(output).toMatch(
      filtered ? /^PASS {2}v2 page filtered by status: /m : /^SKIP {2}v2 page filtered by status: no filtered page on this stage/m,
    );
    expect(output).toContain(filtered ? 'All 12 checks passed.' : '11 of 12 checks passed, 1 skipped.');
    expect(status).toBe(0);
  });

  it('cancels the order --cancel names', async () => {
    const { status, output } = await againstService(['--cancel', '3']);
    expect(output).toMatch(/^PASS {2}cancel order 3: 204, X-Request-Id \S+$/m);
    expect(output).toContain('All 13 checks passed.');
    expect(status).toBe(0);
  });

  it("writes no order where it cannot tell the server's table: those checks are SKIP, saying why", async () => {
    const { status, output } = await smoke(['--base-url', service.url!], {
      STORE_API_KEY: key,
      LOCAL_STATE_FILE: '/nonexistent/npm-start.json',
    });
    expect(output).toMatch(/^SKIP {2}cancel of a pending order, and again: no running npm start serves http:\/\/127\.0\.0\.1:\d+\/v1/m);
    expect(output).toMatch(/^SKIP {2}cancel of a shipped order: /m);
    expect(output).toContain('10 of 12 checks passed, 2 skipped.');
    expect(status).toBe(0);
  });

  it('fails, exit code 1, with a wrong key, naming each check it failed', async () => {
    const { status, output } = await againstService([], { STORE_API_KEY: 'not-the-key-of-this-stage-000' });
    expect(output).toMatch(/^FAIL {2}authorizer allows the key: refused it: 401 /m);
    expect(output).toMatch(/^FAIL {2}v1 list: expected 200, got 401/m);
    expect(output).toMatch(/^FAIL {2}cancel of a pending order, and again: expected 204, got 401/m);
    expect(output).toMatch(/^FAIL {2}v2 pages of one through their cursors: expected 200, got 401/m);
    expect(output).toContain('10 of 12 checks FAILED');
    expect(status).toBe(1);
  });

  it('fails against a server that answers nonsense', async () => {
    const nonsense = await fakeServer((res) => res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Request-Id': 'r' }).end('hello'));
    try {
      const { status, output } = await smoke(['--base-url', nonsense.url]);
      expect(output).toMatch(/^FAIL {2}v1 list: expected JSON, got hello$/m);
      expect(output).toMatch(/^FAIL {2}v2 pages of one through their cursors: expected JSON, got hello$/m);
      expect(output).toMatch(/^FAIL {2}authorizer refuses a wrong key: expected 401 unauthorized, got 200/m);
      expect(output).toMatch(/^PASS {2}authorizer allows the key: 200 past the authorizer$/m);
      expect(output).toContain('9 of 12 checks FAILED');
      expect(status).toBe(1);
    } finally {
      nonsense.close();
    }
  });

  it('gives up on a server that never answers, after the timeout of each request', async () => {
    const silent = await fakeServer('never');
    try {
      const { status, output } = await smoke(['--base-url', silent.url, '--timeout-ms', '300']);
      expect(output).toMatch(/^FAIL {2}v1 list: no answer within 300 ms$/m);
      expect(status).toBe(1);
    } finally {
      silent.close();
    }
  });

  it(
    'refuses a plain http:// URL to another machine before sending anything: the key would cross the network in clear',
    { timeout: 120_000 },
    async () => {
      // Node's own proxy support (NODE_USE_ENV_PROXY) sends every request for a non-loopback host to
      // this recording proxy, so a request that left the process would be seen here, key and all.
      const proxy = await recordingProxy();
      try {
        const proxied = { STORE_API_KEY: key, NODE_USE_ENV_PROXY: '1', HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url, NO_PROXY: '' };
        for (const url of ['http://store.example.com/v1', 'http://127.0.0.1.example.net/v1']) {
          const { status, output } = await smoke(['--base-url', url], proxied);
          expect(output).toContain('http:// only for this machine');
          expect(status).toBe(2);
        }
        expect(proxy.requests).toEqual([]);
        // The proxy does see what leaves the process: with https:// the smoke test reaches it (and fails).
        const { status } = await smoke(['--base-url', 'https://store.example.com/v1', '--timeout-ms', '2000'], proxied);
        expect(status).toBe(1);
        expect(proxy.requests.length).toBeGreaterThan(0);
      } finally {
        proxy.close();
      }
    },
  );

  // Eight runs at once: each is a node process refused on its arguments alone; one after another
  // they took more than two minutes on a busy machine.
  it('refuses to run without a base URL or a key, exit code 2', { timeout: 180_000 }, async () => {
    const refusals: [string[], Record<string, string> | undefined, string][] = [
      [[], undefined, '--base-url is required'],
      [['--base-url', service.url!], {}, 'STORE_API_KEY'],
      [['--base-url', 'ftp://x'], undefined, 'http(s) URL'],
      [['--base-url', service.url!.replace(/\/v1$/, '')], undefined, 'must end in /v1'],
      [['--base-url', service.url!, '--no-such-option'], undefined, 'Usage:'],
      [['--base-url', service.url!, '--timeout-ms', '0'], undefined, '--timeout-ms must be a positive whole number'],
      [['--base-url', service.url!, '--stage', 'prod'], undefined, '--stage must be one of staging, production; got "prod"'],
      [['--base-url', service.url!, '--cancel', 'abc'], undefined, '--cancel'],
    ];
    const results = await Promise.all(refusals.map(([args, env]) => smoke(args, env)));
    refusals.forEach(([args, , message], at) =>
      expect(results[at], args.join(' ')).toMatchObject({ status: 2, output: expect.stringContaining(message) }),
    );
  });
});

describe('npm run smoke against the local service running a wrong release', () => {
  it.each([
    [
      'listOrdersPaged',
      'pagedCursorIgnored',
      'answers the first page again whatever the cursor',
      ['v2 pages of one through their cursors'],
    ],
    ['listOrdersPaged', 'pagedFilterIgnored', 'ignores the filters', ['v2 page filtered by status', 'v2 page filtered by ship date']],
    ['cancelOrder', 'cancelShipped', 'cancels a shipped order', ['cancel of a shipped order']],
    [
      'cancelOrder',
      'cancelOrder',
      'answers 204 without writing',
      ['cancel of a pending order, and again', 'cancel of a shipped order', 'cancel of an absent order'],
    ],
    ['listOrders', 'listOrderTwice', 'lists an order twice', ['v1 list', 'v1 list with gzip']],
  ] as const)(
    'fails for a build whose %s (%s) %s, naming the checks it failed',
    async (name, fault, _what, failedChecks) => {
      const codeDir = await brokenBuild(faults[fault]);
      const api = await startTestApi(demoOrders, { registry: withBrokenBuild(registry, name, codeDir) });
      const stateFile = join(tempDir('smoke-state-'), 'npm-start.json');
      writeLocalState(
        {
          pid: process.pid,
          apiUrl: api.url,
          dynamoDbEndpoint: dynamoDbEndpoint(),
          ordersTable: api.orders.tableName,
          apiKeysTable: api.apiKeys.tableName,
          dynamoDbCredentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID!, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY! },
          authorizerCacheTtlSeconds: 300,
          startedAt: new Date().toISOString(),
        },
        stateFile,
      );
      try {
        const { status, output } = await smoke(['--base-url', api.url], { STORE_API_KEY: api.key, LOCAL_STATE_FILE: stateFile });
        const failed = [...output.matchAll(/^FAIL {2}([^:]+):/gm)].map(([, check]) => check);
        expect(failed, output).toEqual(failedChecks);
        expect(status).toBe(1);
      } finally {
        await api.close();
      }
    },
    180_000,
  );
});
