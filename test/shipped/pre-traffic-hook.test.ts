/**
 * The pre-traffic hook as shipped: its bundle, under its template's settings, invoking the
 * shipped function bundles (run by the runtime stand-in behind a local Lambda endpoint,
 * ./fake-aws.ts) against DynamoDB Local, and reporting to a local CodeDeploy endpoint. Once with
 * today's bundles, then with one deliberately broken build of each function (./broken-builds.ts):
 * each must make the hook report Failed, naming what failed.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canaryKeySecretName, canaryTier } from '../../shared/canary-key.ts';
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
    fake.secrets.set(canaryKeySecretName(config.stage), JSON.stringify({ key: canaryKey, keyId: created.item.keyId, usageIdentifierKey }));
    const names = {
      [logicalId(s, s.ordersTable)]: tables.orders.tableName,
      [logicalId(s, s.apiKeysTable)]: tables.apiKeys.tableName,
      [logicalId(s, s.listLeasesTable)]: tables.listLeases.tableName,
    };
    const endpoint = { DYNAMODB_ENDPOINT: dynamoDbEndpoint() };
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

  /** One hook run with these function bundles: what it reported to CodeDeploy, what it returned, what it printed. */
  const runHook = async (overrides: Partial<typeof functions> = {}) => {
    for (const [name, fn] of Object.entries({ ...functions, ...overrides })) fake.functions.set(arnOf(name), fn);
    const before = fake.reports.length;
    const run = await runBundleAsync(hook, [{ name: 'hook', requestId: 'hook-1', event: hookEvent }]);
    const outcome = run.outcomes[0]!;
    const value = (outcome.outcome === 'returned' ? outcome.value : undefined) as { status: string; failed: string[]; lines: string[] };
    return { reports: fake.reports.slice(before), value, output: run.output, outcome };
  };
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
      expect.stringMatching(/^PASS {2}cancel of an absent order: order -\d+: 404 order_not_found, X-Request-Id pre-traffic-[0-9a-f]+$/),
      expect.stringMatching(/^PASS {2}cancel of a malformed id: 400 invalid_order_id/),
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
