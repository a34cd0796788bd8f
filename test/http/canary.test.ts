/**
 * The Synthetics canary's script as the stack ships it (bundled by the same function the stack
 * calls), run against `npm start`. Its key comes from Secrets Manager (a local stand-in,
 * ../lib/fake-aws.ts), as on a stage. The smoke check reads through the API's client, bundled
 * from its source, which keeps int64 ids exact without JSON.parse's source text: the bundle passes
 * on Node.js 20 too.
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
  /** The ProbeSetupFailed values the runs published: how many of its own setup steps failed. */
  const setupFailed = () => fake.metricData.filter((datum) => datum.MetricName === 'ProbeSetupFailed').map((datum) => datum.Value);

  /** One canary run: the handler's result or its error, and what it printed. */
  const canaryRun = (node = process.execPath, statusFilter: string | null = 'on', env: Record<string, string> = {}) =>
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
            ...env,
          },
          timeout: 60_000,
        },
        (_error, stdout) => {
          const lines = stdout.trim().split('\n');
          resolve({ ...(JSON.parse(lines.at(-1) ?? '{}') as { result?: string; error?: string }), output: stdout });
        },
      );
    });

  it('passes every smoke check with the canary key it reads from the secret store, printing what it checked but never the key', async () => {
    const before = probeBusy().length;
    const { result, error, output } = await canaryRun();
    expect(error).toBeUndefined();
    expect(result).toBe('All 8 checks passed.');
    expect(output).toMatch(/^PASS {2}list: 200, 7 orders/m);
    // A page of one, then the next through its cursor: its own pending order is in the store meanwhile, never listed.
    expect(output).toMatch(/^PASS {2}v2 first and second page: 200 and 200 through the cursor, [01] and [01] orders, X-Request-Id \S+$/m);
    expect(output).toMatch(/^PASS {2}v2 page of pending orders: 200, 4 orders, the last page, X-Request-Id \S+$/m);
    expect(output).toMatch(/^PASS {2}wrong key: 401 unauthorized/m);
    expect(output).toMatch(
      /^PASS {2}cancel of a pending order: order -9223372036854775700: 204 \(X-Request-Id \S+\), stored cancelled at \S+, and 204 again$/m,
    );
    expect(output).not.toContain(canaryKey);
    // Its own order is gone after the run, and the run says it was never busy and set itself up.
    expect(await probeOrdersLeft()).toEqual([]);
    expect(setupFailed().slice(-1)).toEqual([0]);
    expect(probeBusy().slice(before)).toEqual([
      {
        Namespace: 'StoreOrders/Probes',
        MetricName: 'ProbeBusy',
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
      expect(output).toMatch(/^BUSY {2}list: 429 too_many_requests, Retry-After 1 \(5 tries\), past this run's time$/m);
      expect(output).toMatch(/^BUSY {2}list with gzip: 429 too_many_requests/m);
      expect(output).not.toMatch(/^FAIL/m);
      expect(result).toBe("6 of 8 checks passed, 2 busy (the service refused with Retry-After until the run's time ran out).");
      expect(
        probeBusy()
          .slice(before)
          .map((datum) => datum.Value),
      ).toEqual([2]);
    } finally {
      await releaseListLease(leases, held!);
    }
  }, 90_000);

  it.runIf(node20 !== undefined)(
    'passes on Node.js 20 as well: the client reads int64 ids exactly without JSON.parse source text',
    async () => {
      const { result, error } = await canaryRun(node20);
      expect(error).toBeUndefined();
      expect(result).toBe('All 8 checks passed.');
    },
  );

  it('fails the run, naming the checks that failed, when its key is refused', async () => {
    const secret = fake.secrets.get(secretName)!;
    fake.secrets.set(secretName, JSON.stringify({ ...JSON.parse(secret), key: 'so_local_canary-test-key-revoked-000000' }));
    try {
      const { result, error } = await canaryRun();
      expect(result).toBeUndefined();
      expect(error).toMatch(/^FAIL {2}list: expected 200, got 401/);
      expect(error).toContain('FAIL  list with gzip: expected 200, got 401');
      expect(error).toContain('FAIL  v2 first and second page: expected 200, got 401 unauthorized');
      expect(error).toContain('FAIL  v2 page of pending orders: expected 200, got 401 unauthorized');
      expect(error).toContain('FAIL  cancel an id that cannot exist: expected 404 order_not_found, got 401');
    } finally {
      fake.secrets.set(secretName, secret);
    }
  });

  it("passes a run that cannot set itself up, asking nothing of the service wrongly, and publishes ProbeSetupFailed: its key's secret missing, or its probe order not written", async () => {
    const secret = fake.secrets.get(secretName)!;
    fake.secrets.delete(secretName);
    try {
      const { result, error } = await canaryRun();
      expect(error).toBeUndefined();
      expect(result).toMatch(/^SETUP {2}canary key: not read from store-orders\/local\/canary-key: .*No check ran\.$/);
      expect(setupFailed().slice(-1)).toEqual([1]);
    } finally {
      fake.secrets.set(secretName, secret);
    }
    // A table its role may not write (here, one that does not exist): every other check still runs and passes.
    const { result, error, output } = await canaryRun(process.execPath, 'on', { ORDERS_TABLE: `${tables.ORDERS_TABLE}-missing` });
    expect(error).toBeUndefined();
    expect(output).toMatch(/^SETUP {2}cancel of a pending order: no probe order to cancel: /m);
    expect(output).not.toMatch(/^FAIL/m);
    expect(result).toBe("7 of 8 checks passed, 1 not set up (the prober's own fault, not the service's).");
    expect(setupFailed().slice(-1)).toEqual([1]);
  });

  it('asks for no filtered page while its stage has statusFilterChecks off, and refuses a STATUS_FILTER_CHECK it does not know', async () => {
    const off = await canaryRun(process.execPath, 'off');
    expect(off.error).toBeUndefined();
    expect(off.result).toBe('All 7 checks passed.');
    expect(off.output).not.toContain('v2 page of pending orders');
    expect((await canaryRun(process.execPath, null)).error).toBe('STATUS_FILTER_CHECK must be on or off; got ""');
    expect((await canaryRun(process.execPath, 'yes')).error).toBe('STATUS_FILTER_CHECK must be on or off; got "yes"');
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
