import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startServiceProcess, stopServiceProcess, uniqueTables } from '../lib/service-process.ts';
import { localStage, stages } from '../../infra/stage-config.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { dynamoDbEndpoint } from '../lib/local-api.ts';

const key = 'smoke-test-local-key-0123456789';

/** `npm run smoke -- …` as an engineer types it, with STORE_API_KEY from `env` (asynchronously: the fake servers live in this process). */
const smoke = (args: string[], env: Record<string, string> = { STORE_API_KEY: key }) => {
  const { STORE_API_KEY, ...inherited } = process.env;
  return new Promise<{ status: number | null; output: string }>((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', 'smoke', '--', ...args],
      { env: { ...inherited, ...env }, timeout: 100_000 },
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

  it('passes against npm start: the list with and without gzip, a v2 page and a pending one, 401, 404 route, 404 order, X-Request-Id on every answer', async () => {
    const { status, output } = await smoke(['--base-url', service.url!]);
    expect(output).toMatch(/^PASS {2}list: 200, 7 orders, first byte after \d+ ms, X-Request-Id \S+$/m);
    expect(output).toMatch(/^PASS {2}list with gzip: 200, 7 orders/m);
    expect(output).toMatch(/^PASS {2}v2 first and second page: 200 and 200 through the cursor, 1 and 1 orders, X-Request-Id \S+$/m);
    expect(output).toMatch(/^PASS {2}v2 page of pending orders: 200, [1-6] orders, the last page, X-Request-Id \S+$/m);
    expect(output).toMatch(/^PASS {2}wrong key: 401 unauthorized, X-Request-Id \S+$/m);
    expect(output).toMatch(/^PASS {2}unknown route: 404 route_not_found/m);
    expect(output).toMatch(/^PASS {2}cancel an id that cannot exist: 404 order_not_found/m);
    expect(output).toContain('All 7 checks passed.');
    expect(output).not.toContain(key);
    expect(status).toBe(0);
  });

  it('passes with a key of the default tier, whose list limit refuses a second list at once: it waits as Retry-After says', async () => {
    const apiKeys = { client: createDocumentClient({ endpoint: dynamoDbEndpoint() }), tableName: tables.API_KEYS_TABLE };
    const { key: standardKey } = await createApiKey(apiKeys, { name: 'smoke', prefix: 'so_local_', tier: localStage.defaultTier });
    apiKeys.client.destroy();
    expect(stages.production.tiers[stages.production.defaultTier].listThrottling.burstLimit).toBe(1);
    const { status, output } = await smoke(['--base-url', service.url!], { STORE_API_KEY: standardKey });
    expect(output).toMatch(/^PASS {2}list with gzip: 200, 7 orders/m);
    expect(output).toContain('All 7 checks passed.');
    expect(status).toBe(0);
  });

  it('with --list-bytes (as the canary runs it), stops reading each list after that much and checks the orders in it', async () => {
    const { status, output } = await smoke(['--base-url', service.url!, '--list-bytes', '200']);
    expect(output).toMatch(/^PASS {2}list: 200, the first [1-7] orders \(reading stopped after \d{3,} bytes\), first byte after/m);
    expect(output).toMatch(/^PASS {2}list with gzip: 200, the first [1-7] orders/m);
    expect(output).toContain('All 7 checks passed.');
    expect(status).toBe(0);
    expect((await smoke(['--base-url', service.url!, '--list-bytes', '0'])).output).toContain(
      '--list-bytes must be a positive whole number',
    );
  });

  it("with --stage, asks for a filtered page only where that stage's statusFilterChecks is on (as the pipeline runs it)", async () => {
    const { status, output } = await smoke(['--base-url', service.url!, '--stage', 'staging']);
    const filtered = stages.staging.statusFilterChecks;
    expect(output.includes('v2 page of pending orders')).toBe(filtered);
    expect(output).toContain(`All ${filtered ? 7 : 6} checks passed.`);
    expect(status).toBe(0);
  });

  it('cancels only the order --cancel names', async () => {
    const { status, output } = await smoke(['--base-url', service.url!, '--cancel', '3']);
    expect(output).toMatch(/^PASS {2}cancel order 3: 204, X-Request-Id \S+$/m);
    expect(output).toContain('All 8 checks passed.');
    expect(status).toBe(0);
  });

  it('fails, exit code 1, with a wrong key', async () => {
    const { status, output } = await smoke(['--base-url', service.url!], { STORE_API_KEY: 'not-the-key-of-this-stage-000' });
    expect(output).toMatch(/^FAIL {2}list: expected 200, got 401 unauthorized/m);
    expect(output).toMatch(/^FAIL {2}v2 first and second page: expected 200, got 401 unauthorized/m);
    expect(output).toContain('checks FAILED.');
    expect(status).toBe(1);
  });

  it('fails against a server that answers nonsense', async () => {
    const nonsense = await fakeServer((res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('hello'));
    try {
      const { status, output } = await smoke(['--base-url', nonsense.url]);
      expect(output).toMatch(/^FAIL {2}list: The list is not a JSON array of orders/m);
      expect(output).toMatch(/^FAIL {2}v2 first and second page: The page is not JSON/m);
      expect(output).toMatch(/^FAIL {2}wrong key: /m);
      expect(output).toContain('7 of 7 checks FAILED.');
      expect(status).toBe(1);
    } finally {
      nonsense.close();
    }
  });

  it('gives up on a server that never answers, after the timeout of each request', async () => {
    const silent = await fakeServer('never');
    try {
      const { status, output } = await smoke(['--base-url', silent.url, '--timeout-ms', '300']);
      expect(output).toMatch(/^FAIL {2}list: no answer within 300 ms$/m);
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

  it('refuses to run without a base URL or a key, exit code 2', async () => {
    expect(await smoke([])).toMatchObject({ status: 2, output: expect.stringContaining('--base-url is required') });
    expect(await smoke(['--base-url', service.url!], {})).toMatchObject({ status: 2, output: expect.stringContaining('STORE_API_KEY') });
    expect(await smoke(['--base-url', 'ftp://x'])).toMatchObject({ status: 2, output: expect.stringContaining('http(s) URL') });
    expect(await smoke(['--base-url', service.url!.replace(/\/v1$/, '')])).toMatchObject({
      status: 2,
      output: expect.stringContaining('must end in /v1'),
    });
    expect(await smoke(['--base-url', service.url!, '--no-such-option'])).toMatchObject({
      status: 2,
      output: expect.stringContaining('Usage:'),
    });
    expect(await smoke(['--base-url', service.url!, '--timeout-ms', '0'])).toMatchObject({
      status: 2,
      output: expect.stringContaining('--timeout-ms must be a positive whole number'),
    });
    expect(await smoke(['--base-url', service.url!, '--stage', 'prod'])).toMatchObject({
      status: 2,
      output: expect.stringContaining('--stage must be one of staging, production; got "prod"'),
    });
    expect(await smoke(['--base-url', service.url!, '--cancel', 'abc'])).toMatchObject({
      status: 2,
      output: expect.stringContaining('--cancel'),
    });
  });
});
