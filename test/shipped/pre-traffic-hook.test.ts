/**
 * The pre-traffic hook as shipped: its bundle, under its template's settings, invoking the
 * shipped function bundles (run by the runtime stand-in behind a local Lambda endpoint,
 * ./fake-aws.ts) against DynamoDB Local, and reporting to a local CodeDeploy endpoint. Once with
 * today's bundles, then with one deliberately broken build of each function (./broken-builds.ts):
 * each must make the hook report Failed, naming what failed.
 */
import { BatchWriteCommand, NumberValue, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { putOrders } from '../../infra/local/seed.ts';
import { ensureStatusIndex } from '../../infra/local/tables.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canaryKeySecretName, canaryTier } from '../../shared/canary-key.ts';
import { cursorSecretName } from '../../shared/cursor-keys.ts';
import { acquireListLease, releaseListLease } from '../../shared/list-leases.ts';
import { stages } from '../../infra/stage-config.ts';
import type { StoreFunction } from '../../infra/cdk/store-function.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { logicalId, synthApp } from '../lib/cdk.ts';
import { createTestTables, dynamoDbEndpoint, order } from '../lib/local-api.ts';
import { brokenBuild, faults } from '../lib/broken-builds.ts';
import { type DeployedFunction, deployedFunction, runBundleAsync } from '../lib/bundles.ts';
import { startFakeAws } from '../lib/fake-aws.ts';
import type { Template } from '../lib/template.ts';

const config = stages.production;
const canaryKey = `${config.keyPrefix}pre-traffic-canary-key-0123456789abcdef`;
const usageIdentifierKey = 'c3'.repeat(32);
const arnOf = (name: string) => `arn:aws:lambda:us-east-1:123456789012:function:${name}:7`;
const hookEvent = { DeploymentId: 'd-PRETRAFFIC', LifecycleEventHookExecutionId: 'hook-execution-1' };

describe('the pre-traffic hook, as shipped, against the shipped functions', () => {
  const { stack, template, outdir } = synthApp({ bundle: [config.stackName] });
  const s = stack('production');
  const t = template('production').toJSON() as Template;
  const [listFn, cancelFn, pagedFn] = s.routeFunctions.map(({ fn }) => fn) as [StoreFunction, StoreFunction, StoreFunction];
  let fake: Awaited<ReturnType<typeof startFakeAws>>;
  let tables: Awaited<ReturnType<typeof createTestTables>>;
  let functions: Record<'authorizer' | 'listOrders' | 'cancelOrder' | 'listOrdersPaged', DeployedFunction>;
  let hook: DeployedFunction;
  let canaryKeyId: string;
  const leaseTable = () => ({ client: tables.client, tableName: tables.listLeases.tableName });
  /** The logical id of the version a deploy publishes of a function (its name carries the code's hash). */
  const versionOf = (functionLogicalId: string) =>
    Object.entries(t.Resources).find(
      ([, resource]) =>
        resource.Type === 'AWS::Lambda::Version' &&
        JSON.stringify(resource.Properties.FunctionName) === JSON.stringify({ Ref: functionLogicalId }),
    )![0];

  beforeAll(async () => {
    tables = await createTestTables([
      order('1', 'pending', { petId: '101', quantity: '1', complete: false }),
      order('2', 'shipped', { petId: '102', quantity: '3', complete: true }),
      order('9223372036854775807', 'pending', { petId: '9007199254740993' }),
    ]);
    const created = await createApiKey(tables.apiKeys, {
      name: 'canary',
      prefix: '',
      key: canaryKey,
      tier: canaryTier,
      usageKey: usageIdentifierKey,
    });
    fake = await startFakeAws();
    canaryKeyId = created.item.keyId;
    fake.secrets.set(canaryKeySecretName(config.stage), JSON.stringify({ key: canaryKey, keyId: created.item.keyId, usageIdentifierKey }));
    // The v2 list seals a cursor once the store holds more than a page, with the stage's cursor keys.
    fake.secrets.set(cursorSecretName(config.stage), JSON.stringify({ current: 'pre-traffic-cursor-key-0123456789abcdef' }));
    const names = {
      [logicalId(s, s.ordersTable)]: tables.orders.tableName,
      [logicalId(s, s.apiKeysTable)]: tables.apiKeys.tableName,
      [logicalId(s, s.listLeasesTable)]: tables.listLeases.tableName,
    };
    // The v2 list reads its cursor keys from Secrets Manager: the local endpoint answers for it.
    const endpoint = {
      DYNAMODB_ENDPOINT: dynamoDbEndpoint(),
      AWS_ENDPOINT_URL_SECRETS_MANAGER: fake.endpoints.AWS_ENDPOINT_URL_SECRETS_MANAGER,
    };
    const deployed = (fn: StoreFunction) => deployedFunction(t, outdir, logicalId(s, fn.function), names, endpoint);
    functions = {
      authorizer: deployed(s.authorizerFunction),
      listOrders: deployed(listFn),
      cancelOrder: deployed(cancelFn),
      listOrdersPaged: deployed(pagedFn),
    };
    const versions = Object.fromEntries(
      (
        [
          [s.authorizerFunction, 'authorizer'],
          [listFn, 'listOrders'],
          [cancelFn, 'cancelOrder'],
          [pagedFn, 'listOrdersPaged'],
        ] as const
      ).map(([fn, name]) => [versionOf(logicalId(s, fn.function)), arnOf(name)]),
    );
    hook = deployedFunction(
      t,
      outdir,
      logicalId(s, s.preTrafficHook.function),
      {
        ...versions,
        [logicalId(s, s.ordersTable)]: tables.orders.tableName,
        [logicalId(s, s.api)]: 'abc123',
        'AWS::Partition': 'aws',
        'AWS::Region': 'us-east-1',
        'AWS::AccountId': '123456789012',
      },
      { ...fake.endpoints, AWS_ENDPOINT_URL_DYNAMODB: dynamoDbEndpoint() },
    );
  }, 300_000);
  afterAll(() => fake?.close());

  type HookValue = { status: string; failed: string[]; lines: string[] };
  /** One hook run with these function bundles: what it reported to CodeDeploy, what it returned, what it printed. */
  const runHook = async (overrides: Partial<typeof functions> = {}, event = hookEvent, hookFn = hook) => {
    for (const [name, fn] of Object.entries({ ...functions, ...overrides })) fake.functions.set(arnOf(name), fn);
    const before = fake.reports.length;
    const run = await runBundleAsync(hookFn, [{ name: 'hook', requestId: 'hook-1', event }]);
    const outcome = run.outcomes[0]!;
    const value = (outcome.outcome === 'returned' ? outcome.value : undefined) as HookValue;
    const reports = fake.reports.slice(before).filter((report) => report.deploymentId === event.DeploymentId);
    return { reports, value, output: run.output, outcome };
  };

  /**
   * Three hooks at once, as CloudFormation starts them when one release moves the three aliases:
   * beside the synthetic client's two lists (both of the canary key's list leases held), with each
   * new version's reserved concurrency at one, so that the hooks meet leases and Lambda throttles.
   */
  const runThreeHooksAtOnce = async (overrides: Partial<typeof functions> = {}) => {
    const holders = ['synthetic-run-1', 'synthetic-run-2'];
    const expiresAt = new Date(Date.now() + 10 * 60_000);
    const leases = await Promise.all(
      holders.map(() => acquireListLease(leaseTable(), { keyId: canaryKeyId, holder: `synthetic-${Math.random()}`, slots: 2, expiresAt })),
    );
    expect(leases.every((lease) => lease !== undefined)).toBe(true);
    for (const name of ['authorizer', 'listOrders', 'cancelOrder']) fake.concurrency.set(arnOf(name), 1);
    const throttledBefore = fake.throttled.length;
    try {
      const runs = await Promise.all(
        ['d-AUTHORIZER', 'd-LISTORDERS', 'd-CANCELORDER'].map((id) =>
          runHook(overrides, { DeploymentId: id, LifecycleEventHookExecutionId: `hook-${id}` }),
        ),
      );
      return { runs, throttles: fake.throttled.length - throttledBefore };
    } finally {
      fake.concurrency.clear();
      for (const lease of leases) await releaseListLease(leaseTable(), lease!);
    }
  };

  it('passes three hooks at once on a good build, beside the synthetic client, through its leases and Lambda throttles', async () => {
    const { runs, throttles } = await runThreeHooksAtOnce();
    for (const { reports, value, outcome } of runs) {
      expect(outcome.outcome, JSON.stringify(outcome)).toBe('returned');
      expect(value.lines.filter((line) => line.startsWith('FAIL'))).toEqual([]);
      expect(reports.map((report) => report.status)).toEqual(['Succeeded']);
    }
    // The hooks did meet the throttles (each function's concurrency was one, three hooks at once).
    expect(throttles).toBeGreaterThan(0);
  }, 240_000);

  it('fails all three hooks at once on a build whose list answers [], naming the list', async () => {
    const { runs } = await runThreeHooksAtOnce({ listOrders: await withFault('listOrders') });
    for (const { reports, value } of runs) {
      expect(reports.map((report) => report.status)).toEqual(['Failed']);
      expect(value.failed).toEqual(['list']);
    }
  }, 240_000);

  it('reports Failed before its own timeout when a version stays throttled, saying so', async () => {
    // 40 s of function time, 30 s kept for the report: the checks have 10 s.
    const short = { ...hook, properties: { ...hook.properties, Timeout: 40 } };
    fake.concurrency.set(arnOf('listOrders'), 0);
    try {
      const started = Date.now();
      const { reports, value, outcome } = await runHook(
        {},
        { DeploymentId: 'd-THROTTLED', LifecycleEventHookExecutionId: 'hook-t' },
        short,
      );
      expect(outcome.outcome, JSON.stringify(outcome)).toBe('returned');
      expect(reports.map((report) => report.status)).toEqual(['Failed']);
      // The list gave up before the deadline; the checks after it ran in the time left, or were
      // not started, or were stopped at the deadline: none of them waited past it.
      expect(value.failed[0]).toBe('list');
      for (const line of value.lines.slice(3))
        expect(line).toMatch(
          /^(PASS {2}(v2 page|cancel of )|FAIL {2}(v2 page.*|cancel of .*): (not started: the checks reached their deadline|no answer before the deadline)$)/,
        );
      expect(value.lines).toContainEqual(
        expect.stringMatching(/^FAIL {2}list: still busy at the deadline after \d+ tries \(last: throttled by Lambda\)$/),
      );
      expect(Date.now() - started).toBeLessThan(40_000);
    } finally {
      fake.concurrency.clear();
    }
  }, 120_000);

  it('reports Failed with the reason when its own environment is invalid, instead of failing at init', async () => {
    const broken = { ...hook, environment: { ...hook.environment, METHOD_ARN_PREFIX: 'not-an-arn' } };
    const { reports, value, outcome } = await runHook({}, { DeploymentId: 'd-BADENV', LifecycleEventHookExecutionId: 'hook-e' }, broken);
    expect(outcome.outcome, JSON.stringify(outcome)).toBe('returned');
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
    expect(value.lines).toEqual([expect.stringMatching(/^FAIL {2}settings: the hook's environment is invalid: .*METHOD_ARN_PREFIX/)]);
  }, 120_000);
  const withFault = async (name: keyof typeof faults) => ({ ...functions[name], codeDir: await brokenBuild(faults[name]) });

  it("reports Succeeded to CodeDeploy for today's bundles, after checking the authorizer, the list and both cancels", async () => {
    const { reports, value, outcome } = await runHook();
    expect(outcome.outcome, JSON.stringify(outcome)).toBe('returned');
    expect(reports).toEqual([{ deploymentId: 'd-PRETRAFFIC', lifecycleEventHookExecutionId: 'hook-execution-1', status: 'Succeeded' }]);
    expect(value.failed).toEqual([]);
    expect(value.lines).toEqual([
      expect.stringMatching(/^PASS {2}authorizer allows the canary key: Allow for key_[0-9a-f]{16}, with its usage identifier$/),
      'PASS  authorizer refuses a wrong key: Unauthorized',
      'PASS  list: 200, 3 valid orders (table item count 3)',
      'PASS  v2 page: 200, 3 orders on the first page',
      'PASS  v2 page of pending orders: 200, 2 pending orders on the first page',
      expect.stringMatching(/^PASS {2}cancel of an absent order: order -\d+: 404 order_not_found, X-Request-Id pre-traffic-[0-9a-f]+$/),
      expect.stringMatching(/^PASS {2}cancel of a malformed id: order pre-traffic-check: 400 invalid_order_id/),
    ]);
    // Each function was invoked at its new version, by ARN.
    expect(new Set(fake.invoked)).toEqual(new Set(['authorizer', 'listOrders', 'cancelOrder', 'listOrdersPaged'].map(arnOf)));
  }, 120_000);

  it.each([
    ['authorizer', 'refuses every key', ['authorizer allows the canary key']],
    ['listOrders', 'answers [] whatever the table holds', ['list']],
    ['cancelOrder', 'answers 204 without cancelling', ['cancel of an absent order']],
  ] as const)(
    'reports Failed for a build whose %s %s, naming the check it failed',
    async (name, _what, failedChecks) => {
      const { reports, value } = await runHook({ [name]: await withFault(name) });
      expect(reports.map((report) => report.status)).toEqual(['Failed']);
      expect(value.failed).toEqual(failedChecks);
      for (const check of failedChecks) expect(value.lines).toContainEqual(expect.stringMatching(new RegExp(`^FAIL {2}${check}: `)));
    },
    120_000,
  );

  it('passes a stage whose status index is not ACTIVE yet when the filtered page answers 503 with Retry-After', async () => {
    const table = { TableName: tables.orders.tableName };
    await tables.client.send(
      new UpdateTableCommand({ ...table, GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: 'status-index' } }] }),
    );
    try {
      const { reports, value } = await runHook();
      expect(reports.map((report) => report.status)).toEqual(['Succeeded']);
      expect(value.lines).toContainEqual(
        expect.stringMatching(
          /^PASS {2}v2 page of pending orders: the status index is not ready for Query: 503 service_unavailable, X-Request-Id /,
        ),
      );
    } finally {
      await ensureStatusIndex(tables.client, tables.orders.tableName);
    }
  }, 120_000);

  it('reports Failed, saying how to fix it, when the canary key was never created', async () => {
    const secret = fake.secrets.get(canaryKeySecretName(config.stage))!;
    fake.secrets.delete(canaryKeySecretName(config.stage));
    try {
      const { reports, value } = await runHook();
      expect(reports.map((report) => report.status)).toEqual(['Failed']);
      expect(value.lines).toEqual([expect.stringMatching(/^FAIL {2}canary key: .*npm run keys -- canary --stage/)]);
    } finally {
      fake.secrets.set(canaryKeySecretName(config.stage), secret);
    }
  }, 120_000);

  it('refuses a wrong key made of fresh random characters: none of the canary key beyond its public prefix travels', async () => {
    const before = fake.events.length;
    await runHook();
    const tokens = fake.events
      .slice(before)
      .filter(({ arn }) => arn === arnOf('authorizer'))
      .map(({ event }) => String((event as { authorizationToken: string }).authorizationToken).replace(/^Bearer /, ''));
    const wrong = tokens.filter((token) => token !== canaryKey);
    expect(wrong).toHaveLength(1);
    expect(wrong[0]!.startsWith(config.keyPrefix)).toBe(true);
    const secretPart = canaryKey.slice(config.keyPrefix.length);
    // No run of 6 characters of the key's secret part appears in the wrong key.
    for (let i = 0; i + 6 <= secretPart.length; i++) expect(wrong[0]).not.toContain(secretPart.slice(i, i + 6));
  }, 120_000);

  it('reads only the first 256 KB of a long list, and checks the orders in them', async () => {
    const extra = Array.from({ length: 4000 }, (_, i) =>
      order(String(1_000_000 + i), 'pending', { petId: String(500 + i), quantity: '2', shipDate: '2026-11-25T10:00:00Z', complete: false }),
    );
    await putOrders(tables.orders, extra);
    try {
      const { reports, value } = await runHook();
      expect(reports.map((report) => report.status)).toEqual(['Succeeded']);
      const line = value.lines.find((entry) => entry.startsWith('PASS  list: '))!;
      expect(line).toMatch(
        /^PASS {2}list: 200, the first (\d+) orders valid \(reading stopped after 262144 bytes\) \(table item count 4003\)$/,
      );
      expect(Number(/the first (\d+)/.exec(line)![1])).toBeLessThan(4003);
    } finally {
      for (let at = 0; at < extra.length; at += 25)
        await tables.client.send(
          new BatchWriteCommand({
            RequestItems: {
              [tables.orders.tableName]: extra
                .slice(at, at + 25)
                .map((entry) => ({ DeleteRequest: { Key: { id: NumberValue.from(entry.id) } } })),
            },
          }),
        );
    }
  }, 180_000);

  it("touches no client's order and prints no key", async () => {
    const { output } = await runHook();
    const items = (await tables.client.send(new ScanCommand({ TableName: tables.orders.tableName }))).Items ?? [];
    expect(items.map((item) => `${String(item.id)} ${String(item.status)}`).sort()).toEqual([
      '1 pending',
      '2 shipped',
      '9223372036854775807 pending',
    ]);
    expect(output).not.toContain(canaryKey);
    expect(output).not.toContain(usageIdentifierKey);
  }, 120_000);
});
