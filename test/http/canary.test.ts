/**
 * The Synthetics canary's script as the stack ships it (bundled by the same function the stack
 * calls, with the registry's known-answer suite), run against `npm start`. Its key comes from
 * Secrets Manager (a local stand-in, ../lib/fake-aws.ts), as on a stage. Every int64 is read exactly
 * without JSON.parse's source text: the bundle passes on Node.js 20 too. A canary that cannot run
 * (its settings, its key, its probe orders) passes its run and says so in ProbeSetupFailed (the CanarySetupFailed alarm's metric).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { canaryKeySecretName } from '../../shared/canary-key.ts';
import { acquireListLease, releaseListLease } from '../../functions/list-orders/list-leases.ts';
import { canaryTier, isProbeOrderId } from '../../shared/probes.ts';
import { bundleCanaryScript } from '../../infra/cdk/release-checks.ts';
import { localStage } from '../../infra/stage-config.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { startFakeAws } from '../lib/fake-aws.ts';
import { tempDir } from '../lib/cdk.ts';
import { type ServiceProcess, startServiceProcess, stopServiceProcess, uniqueTables } from '../lib/service-process.ts';
import { dynamoDbEndpoint, order } from '../lib/local-api.ts';
import { putOrders } from '../../infra/local/seed.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';

const developerKey = 'canary-test-developer-key-0123456789';
const canaryKey = 'so_local_canary-test-key-0123456789abcdef';
const secretName = canaryKeySecretName('local');
/** Node.js 20, where this machine has it (the system's): the client's oldest Node.js. */
const node20 = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => existsSync(path));

describe("the Synthetics canary's script against npm start", () => {
  let service: ServiceProcess;
  let fake: Awaited<ReturnType<typeof startFakeAws>>;
  const tables = uniqueTables('canary');
  const bundle = join(bundleCanaryScript(tempDir('store-orders-canary-')), 'nodejs/node_modules/canary.js');

  const client = createDocumentClient({ endpoint: dynamoDbEndpoint() });
  let canaryKeyId: string;
  beforeAll(async () => {
    service = await startServiceProcess('node', { DYNAMODB_ENDPOINT: dynamoDbEndpoint(), STORE_API_KEY: developerKey, ...tables });
    expect(service.url, service.output()).toBeDefined();
    const keys = { client, tableName: tables.API_KEYS_TABLE };
    const { item } = await createApiKey(keys, { name: 'canary', prefix: '', key: canaryKey, tier: canaryTier });
    canaryKeyId = item.keyId;
    fake = await startFakeAws();
    fake.secrets.set(secretName, JSON.stringify({ key: canaryKey, keyId: item.keyId, usageIdentifierKey: item.usageKey }));
  });
  afterAll(() => (fake?.close(), stopServiceProcess(service)));

  /** The orders table's items in the probes' reserved ids: none once a run has ended. */
  const probeOrdersLeft = async () =>
    ((await client.send(new ScanCommand({ TableName: tables.ORDERS_TABLE }))).Items ?? []).filter((item) =>
      isProbeOrderId(String(item.id)),
    );
  /** The ProbeBusy values the runs published (CloudWatch's PutMetricData, on the local endpoint). */
  const probeBusy = () => fake.metricData.filter((datum) => datum.MetricName === 'ProbeBusy');

  /** One canary run: the handler's result or its error, and what it printed. */
  const canaryRun = (node = process.execPath, statusFilter: string | null = 'on', environment: Record<string, string> = {}) =>
    new Promise<{ result?: string; error?: string; output: string }>((resolve) => {
      const script = `require(${JSON.stringify(bundle)}).handler().then((result) => console.log(JSON.stringify({ result })), (error) => console.log(JSON.stringify({ error: error.message })));`;
      execFile(
        node,
        ['-e', script],
        {
          env: {
            PATH: process.env.PATH,
            BASE_URL: service.url,
            CANARY_KEY_SECRET: secretName,
            ...(statusFilter === null ? {} : { STATUS_FILTER_CHECK: statusFilter }),
            ORDERS_TABLE: tables.ORDERS_TABLE,
            SERVICE_NAME: 'store-orders-local',
            AWS_REGION: 'us-east-1',
            // What the run's DynamoDB Local answers to (its probe orders are written there); the fake AWS takes any.
            AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID,
            AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY,
            ...fake.endpoints,
            AWS_ENDPOINT_URL_DYNAMODB: dynamoDbEndpoint(),
            ...environment,
          },
          timeout: 60_000,
        },
        (_error, stdout) => {
          const lines = stdout.trim().split('\n');
          resolve({ ...(JSON.parse(lines.at(-1) ?? '{}') as { result?: string; error?: string }), output: stdout });
        },
      );
    });

  /** The ProbeSetupFailed values the runs published. */
  const setupFailed = () => fake.metricData.filter((datum) => datum.MetricName === 'ProbeSetupFailed');

  it('passes every known answer with the canary key it reads from the secret store, printing what it checked but never the key', async () => {
    const before = fake.metricData.length;
    const { result, error, output } = await canaryRun();
    expect(error).toBeUndefined();
    expect(result).toBe('All 12 checks passed.');
    expect(output).toMatch(/^PASS {2}v1 list: 200, 7 valid orders in \d+ bytes, each id once$/m);
    expect(output).toMatch(/^PASS {2}v2 pages of one through their cursors: 3 pages of one, 3 distinct orders: each cursor moved on$/m);
    expect(output).toMatch(/^PASS {2}v2 page filtered by status: 200, 4 orders, each pending, the last page$/m);
    expect(output).toMatch(/^PASS {2}authorizer refuses a wrong key: 401 unauthorized, X-Request-Id \S+, WWW-Authenticate: Bearer$/m);
    // Its own orders, in the synthetic client's reserved id: a pending one cancelled, a shipped one refused.
    expect(output).toMatch(
      /^PASS {2}cancel of a pending order, and again: order -9223372036854775700: 204, X-Request-Id \S+, stored cancelled at \S+; again 204, unchanged$/m,
    );
    expect(output).toMatch(/^PASS {2}cancel of a shipped order: order -9223372036854775700: 409 order_already_shipped/m);
    expect(output).not.toContain(canaryKey);
    // Its own orders are gone after the run, and the run says it was never busy and set every check up.
    expect(await probeOrdersLeft()).toEqual([]);
    expect(fake.metricData.slice(before)).toEqual([
      {
        Namespace: 'StoreOrders/Probes',
        MetricName: 'ProbeBusy',
        Dimensions: [{ Name: 'service', Value: 'store-orders-local' }],
        Value: 0,
        Unit: 'Count',
      },
      {
        Namespace: 'StoreOrders/Probes',
        MetricName: 'ProbeSetupFailed',
        Dimensions: [{ Name: 'service', Value: 'store-orders-local' }],
        Value: 0,
        Unit: 'Count',
      },
    ]);
  });

  it('passes a run the service keeps refusing with a documented 429 (every list slot of its key held), reporting those checks BUSY and counting them in ProbeBusy', async () => {
    const leases = { client, tableName: localStage.listLeasesTableName };
    const expiresAt = new Date(Date.now() + 5 * 60_000);
    const held = await acquireListLease(leases, { keyId: canaryKeyId, holder: 'another-run', slots: 1, expiresAt });
    expect(held).toBeDefined();
    const before = probeBusy().length;
    try {
      const { result, error, output } = await canaryRun();
      expect(error).toBeUndefined();
      expect(output).toMatch(/^BUSY {2}v1 list: 429 too_many_requests, Retry-After 1 \(5 tries\), past this run's time$/m);
      expect(output).toMatch(/^BUSY {2}v1 list with gzip: 429 too_many_requests/m);
      expect(output).not.toMatch(/^FAIL/m);
      expect(result).toBe("10 of 12 checks passed, 2 busy (refused with Retry-After until the run's time ran out).");
      expect(
        probeBusy()
          .slice(before)
          .map((datum) => datum.Value),
      ).toEqual([2]);
    } finally {
      await releaseListLease(leases, held!);
    }
  }, 90_000);

  it.runIf(node20 !== undefined)('passes on Node.js 20 as well: every int64 is read exactly without JSON.parse source text', async () => {
    const { result, error } = await canaryRun(node20);
    expect(error).toBeUndefined();
    expect(result).toBe('All 12 checks passed.');
  });

  it('fails the run, naming the checks that failed, when its key is refused', async () => {
    const secret = fake.secrets.get(secretName)!;
    fake.secrets.set(secretName, JSON.stringify({ ...JSON.parse(secret), key: 'so_local_canary-test-key-revoked-000000' }));
    try {
      const { result, error } = await canaryRun();
      expect(result).toBeUndefined();
      expect(error).toMatch(/^FAIL {2}authorizer allows the key: refused it: 401/);
      expect(error).toContain('FAIL  v1 list: expected 200, got 401');
      expect(error).toContain('FAIL  v2 pages of one through their cursors: expected 200, got 401');
      expect(error).toContain('FAIL  cancel of an absent order: expected 404 order_not_found, got 401');
    } finally {
      fake.secrets.set(secretName, secret);
    }
  });

  it('asks for no filtered page while its stage has statusFilterChecks off', async () => {
    const off = await canaryRun(process.execPath, 'off');
    expect(off.error).toBeUndefined();
    expect(off.result).toBe('11 of 12 checks passed, 1 skipped.');
    expect(off.output).toMatch(/^SKIP {2}v2 page filtered by status: /m);
  });

  it('is no failing release when it cannot run: its settings, its key or its own probe orders refused are SETUP, the run passes, ProbeSetupFailed counts them', async () => {
    const before = setupFailed().length;
    // Settings the stack got wrong: nothing can run.
    const unknown = await canaryRun(process.execPath, 'yes');
    expect(unknown.error).toBeUndefined();
    expect(unknown.result).toBe('SETUP settings: STATUS_FILTER_CHECK must be on or off; got "yes"');
    // Its key never stored (`npm run keys -- canary` not run yet): nothing can run.
    const secret = fake.secrets.get(secretName)!;
    fake.secrets.delete(secretName);
    const keyless = await canaryRun().finally(() => fake.secrets.set(secretName, secret));
    expect(keyless.error).toBeUndefined();
    expect(keyless.result).toMatch(
      /^SETUP canary key: secret store-orders\/local\/canary-key unreadable \(.*\); create it with `npm run keys -- canary --stage <stage>`$/,
    );
    // Its probe orders refused (as IAM or throttling would refuse them): those checks only; the others run and pass.
    const refused = await canaryRun(process.execPath, 'on', { ORDERS_TABLE: 'no-such-orders-table' });
    expect(refused.error).toBeUndefined();
    expect(refused.output).toMatch(
      /^SETUP cancel of a pending order, and again: could not write its pending probe order in no-such-orders-table: /m,
    );
    expect(refused.output).toMatch(/^SETUP cancel of a shipped order: /m);
    expect(refused.result).toBe('10 of 12 checks passed, 2 not set up (cancel of a pending order, and again, cancel of a shipped order).');
    expect(
      setupFailed()
        .slice(before)
        .map((datum) => datum.Value),
    ).toEqual([1, 1, 2]);
  });

  it("cancels no client's order with the canary key: 404 order_not_found, the order left pending, while a client's key cancels it", async () => {
    const orders = { client, tableName: tables.ORDERS_TABLE };
    await putOrders(orders, [order('424242', 'pending')]);
    // The canary tier's rate is low and the runs above spent its burst: a 429 is waited out (its Retry-After).
    const cancel = async (key: string): Promise<Response> => {
      const response = await fetch(`${service.url}/store/orders/424242`, { method: 'DELETE', headers: { Authorization: `Bearer ${key}` } });
      if (response.status !== 429) return response;
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after') ?? '1') * 1000));
      return cancel(key);
    };
    const stored = async () => (await client.send(new GetCommand({ TableName: tables.ORDERS_TABLE, Key: { id: 424242 } }))).Item?.status;

    const refused = await cancel(canaryKey);
    expect(refused.status).toBe(404);
    expect(((await refused.json()) as { code: string }).code).toBe('order_not_found');
    expect(await stored()).toBe('pending');
    expect((await cancel(developerKey)).status).toBe(204);
    expect(await stored()).toBe('cancelled');
  });
});
