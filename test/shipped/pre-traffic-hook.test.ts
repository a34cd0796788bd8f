/**
 * The pre-traffic hook as shipped: its bundle, under its template's settings, invoking the
 * shipped function bundles (run by the runtime stand-in behind a local Lambda endpoint,
 * ./fake-aws.ts) against DynamoDB Local, and reporting to a local CodeDeploy endpoint. Once with
 * today's bundles, then with deliberately broken builds (./broken-builds.ts): each must make the
 * hook report Failed, naming what failed. The local Lambda endpoint runs each invocation whole and
 * then sends its answer, as Lambda may treat a caller that stopped reading: so the list's own log
 * shows what a probe's list cost.
 */
import { BatchWriteCommand, DeleteCommand, NumberValue, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DescribeTableCommand, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { putOrders } from '../../infra/local/seed.ts';
import { ensureStatusIndex } from '../../infra/local/local-tables.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canaryKeySecretName } from '../../shared/canary-key.ts';
import { canaryTier, isProbeOrderId, probeListBytes, probeOrdersCountedAtMost } from '../../shared/probes.ts';
import { cursorSecretName } from '../../functions/list-orders-paged/cursor-keys.ts';
import { acquireListLease, releaseListLease } from '../../functions/list-orders/list-leases.ts';
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
const canaryKey = `${config.keyPrefix}${'pre-traffic-canary-key-0123456789abcdef'.padEnd(43, '0')}`;
const usageIdentifierKey = 'c3'.repeat(32);
/** A function's ARN; its new version (7), the one the hook checks; and the version its `live` alias points at (6). */
const functionArnOf = (name: string) => `arn:aws:lambda:us-east-1:123456789012:function:${name}`;
const arnOf = (name: string) => `${functionArnOf(name)}:7`;
const liveArnOf = (name: string) => `${functionArnOf(name)}:6`;
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
    // Each live alias points at version 6, today's bundle: the version a busy new version is compared with.
    for (const name of Object.keys(functions)) fake.aliases.set(functionArnOf(name), '6');
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

  /** The orders table's items in the probes' reserved ids. */
  const probeOrdersLeft = async () =>
    ((await tables.client.send(new ScanCommand({ TableName: tables.orders.tableName }))).Items ?? []).filter((item) =>
      isProbeOrderId(String(item.id)),
    );
  const leases = async () => (await tables.client.send(new ScanCommand({ TableName: tables.listLeases.tableName }))).Items ?? [];

  /**
   * `work` with `count` more orders in the table, removed after: a table whose item count is above
   * what probe orders alone can make it (probeOrdersCountedAtMost), so that a list of [] is wrong.
   */
  const withMoreOrders = async <T>(count: number, work: () => Promise<T>): Promise<T> => {
    const extra = Array.from({ length: count }, (_, i) =>
      order(String(1_000_000 + i), 'pending', { petId: String(500 + i), quantity: '2', shipDate: '2026-11-25T10:00:00Z', complete: false }),
    );
    await putOrders(tables.orders, extra);
    try {
      return await work();
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
  };

  type HookValue = { status: string; failed: string[]; busy: string[]; lines: string[] };
  /** One hook run with these function bundles: what it reported to CodeDeploy, what it returned, what it printed. */
  const runHook = async (
    overrides: Partial<typeof functions> = {},
    event = hookEvent,
    hookFn = hook,
    live: Partial<typeof functions> = {},
  ) => {
    for (const [name, fn] of Object.entries({ ...functions, ...overrides })) fake.functions.set(arnOf(name), fn);
    for (const [name, fn] of Object.entries({ ...functions, ...live })) fake.functions.set(liveArnOf(name), fn);
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
    for (const name of ['authorizer', 'listOrders', 'cancelOrder']) fake.concurrency.set(functionArnOf(name), 1);
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
    const broken = await withFault('listOrders', 'listOrders');
    const { runs } = await withMoreOrders(probeOrdersCountedAtMost + 10, () => runThreeHooksAtOnce({ listOrders: broken }));
    for (const { reports, value } of runs) {
      expect(reports.map((report) => report.status)).toEqual(['Failed']);
      expect(value.failed).toEqual(['list']);
    }
  }, 240_000);

  it('reports Succeeded before its own timeout when the new and the live version stay throttled, the list BUSY and counted in ProbeBusy, never failed', async () => {
    // 40 s of function time, 30 s kept for the report: the checks have 10 s.
    const short = { ...hook, properties: { ...hook.properties, Timeout: 40 } };
    // Reserved concurrency is the function's: the live version is throttled alike.
    fake.concurrency.set(functionArnOf('listOrders'), 0);
    const before = fake.metricData.length;
    try {
      const started = Date.now();
      const { reports, value, outcome } = await runHook(
        {},
        { DeploymentId: 'd-THROTTLED', LifecycleEventHookExecutionId: 'hook-t' },
        short,
      );
      expect(outcome.outcome, JSON.stringify(outcome)).toBe('returned');
      // Busy is no wrong answer: the release is not failed for it.
      expect(reports.map((report) => report.status)).toEqual(['Succeeded']);
      expect(value.failed).toEqual([]);
      expect(value.busy[0]).toBe('list');
      expect(value.lines).toContainEqual(
        expect.stringMatching(
          /^BUSY {2}list: still busy at the deadline after \d+ tries \(last: throttled by Lambda\); the live version 6 answered 0 of [1-5]$/,
        ),
      );
      // The checks after it ran in the time left, or were not started or stopped by the deadline (busy: the list took their time).
      for (const line of value.lines.slice(3))
        expect(line).toMatch(/^(PASS {2}|BUSY {2}.*: (not started by|stopped at) the deadline: the checks' time went to a busy service$)/);
      const busy = fake.metricData.slice(before).filter((datum) => datum.MetricName === 'ProbeBusy');
      expect(busy).toEqual([
        {
          Namespace: 'StoreOrders/Probes',
          MetricName: 'ProbeBusy',
          Dimensions: [{ Name: 'service', Value: 'store-orders-production' }],
          Value: value.busy.length,
          Unit: 'Count',
        },
      ]);
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
  const withFault = async (name: keyof typeof functions, fault: keyof typeof faults) => ({
    ...functions[name],
    codeDir: await brokenBuild(faults[fault]),
  });

  it("reports Succeeded to CodeDeploy for today's bundles, after checking every operation, a pending order of its own cancelled", async () => {
    const before = fake.metricData.length;
    const invokedBefore = fake.invoked.length;
    const { reports, value, outcome } = await runHook();
    expect(outcome.outcome, JSON.stringify(outcome)).toBe('returned');
    expect(reports).toEqual([{ deploymentId: 'd-PRETRAFFIC', lifecycleEventHookExecutionId: 'hook-execution-1', status: 'Succeeded' }]);
    expect(value.failed).toEqual([]);
    expect(value.lines).toEqual([
      expect.stringMatching(/^PASS {2}authorizer allows the canary key: Allow for key_[0-9a-f]{16}, with its usage identifier$/),
      'PASS  authorizer refuses a wrong key: Unauthorized',
      expect.stringMatching(/^PASS {2}list: 200, 3 valid orders in \d+ bytes \(table item count [34]\)$/),
      // A page of one, then the next through its cursor: the hook's own order is in the store meanwhile, never listed.
      expect.stringMatching(/^PASS {2}v2 first and second page: 200, then 200 through its cursor: [01] and [01] orders$/),
      'PASS  v2 page of pending orders: 200, 2 pending orders on the first page',
      expect.stringMatching(
        /^PASS {2}cancel of an absent order: order -9223372036854775808: 404 order_not_found, X-Request-Id pre-traffic-[0-9a-f]+$/,
      ),
      expect.stringMatching(/^PASS {2}cancel of a malformed id: order pre-traffic-check: 400 invalid_order_id/),
      expect.stringMatching(
        /^PASS {2}cancel of a pending order: order -92233720368547757\d\d: 204 \(X-Request-Id pre-traffic-[0-9a-f]+\), stored cancelled at \S+, and 204 again$/,
      ),
    ]);
    // Each function was invoked at its new version, by ARN; the run was never busy, and says so.
    expect(new Set(fake.invoked.slice(invokedBefore))).toEqual(
      new Set(['authorizer', 'listOrders', 'cancelOrder', 'listOrdersPaged'].map(arnOf)),
    );
    expect(fake.metricData.slice(before).map((datum) => [datum.MetricName, datum.Value])).toEqual([['ProbeBusy', 0]]);
  }, 120_000);

  it.each([
    ['authorizer', 'authorizer', 'refuses every key', ['authorizer allows the canary key']],
    ['listOrders', 'listOrders', 'answers [] whatever the table holds', ['list']],
    ['cancelOrder', 'cancelOrder', 'answers 204 without cancelling', ['cancel of an absent order', 'cancel of a pending order']],
    ['cancelOrder', 'cancelPendingConflict', 'answers 409 for a pending order', ['cancel of an absent order', 'cancel of a pending order']],
    ['listOrdersPaged', 'secondPageInvalid', 'answers the second page 400 invalid_cursor', ['v2 first and second page']],
  ] as const)(
    'reports Failed for a build whose %s (%s) %s, naming the check it failed',
    async (name, fault, _what, failedChecks) => {
      const broken = await withFault(name, fault);
      const { reports, value } = await withMoreOrders(probeOrdersCountedAtMost + 10, () => runHook({ [name]: broken }));
      expect(reports.map((report) => report.status)).toEqual(['Failed']);
      expect(value.failed).toEqual(failedChecks);
      for (const check of failedChecks) expect(value.lines).toContainEqual(expect.stringMatching(new RegExp(`^FAIL {2}${check}: `)));
      expect(await probeOrdersLeft()).toEqual([]);
    },
    120_000,
  );

  /** Leases a broken list left behind under the hooks' identities (they would refuse the next run's lists). */
  const clearHookLeases = async () => {
    for (const item of await leases())
      if (String(item.lease).startsWith('pre-traffic-'))
        await tables.client.send(new DeleteCommand({ TableName: tables.listLeases.tableName, Key: { lease: item.lease } }));
  };

  it.each([
    [
      'cancelOrder',
      'cancelUnavailable',
      'answers 503 with Retry-After (DynamoDB unreachable)',
      ['cancel of an absent order', 'cancel of a pending order'],
    ],
    ['listOrders', 'listLeaseNeverFree', "answers 429 (the key's list slots always full)", ['list']],
    ['listOrders', 'listLeaseNeverReleased', 'never gives its list lease back', ['list']],
  ] as const)(
    'reports Failed for a build whose %s (%s) %s, beside a live version that answers, naming the check',
    async (name, fault, _what, failedChecks) => {
      const broken = await withFault(name, fault);
      const eventsBefore = fake.events.length;
      try {
        const { reports, value } = await withMoreOrders(probeOrdersCountedAtMost + 10, () => runHook({ [name]: broken }));
        expect(
          reports.map((report) => report.status),
          value.lines.join('\n'),
        ).toEqual(['Failed']);
        expect(value.failed).toEqual(failedChecks);
        for (const check of failedChecks)
          expect(value.lines).toContainEqual(
            expect.stringMatching(
              new RegExp(
                `^FAIL {2}${check}: busy in each of 5 tries \\(last: answered (429|503) .*\\) while the live version 6, asked the same beside each, answered as expected in [45]$`,
              ),
            ),
          );
        // The live version was asked under an identity of its own, never the new version's.
        const liveEvents = fake.events
          .slice(eventsBefore)
          .filter(({ arn }) => arn === liveArnOf(name))
          .map(({ event }) => event as { requestContext: { authorizer: { principalId: string } } });
        expect(liveEvents.length).toBeGreaterThanOrEqual(5);
        for (const event of liveEvents)
          expect(event.requestContext.authorizer.principalId).toBe(`pre-traffic-${hookEvent.DeploymentId}-live`);
        expect(await probeOrdersLeft()).toEqual([]);
      } finally {
        await clearHookLeases();
      }
    },
    180_000,
  );

  it('reports Failed for a build whose list repeats its first Scan page, on a store its bounded list reads in several pages', async () => {
    // As deployed (8 segments; a probe's Scan page of 100, shared/probes.ts): 1,003 orders put more
    // than a page in every segment, all within the probe's 256 KB.
    const good = await withMoreOrders(1_000, () => runHook());
    expect(
      good.reports.map((report) => report.status),
      good.value.lines.join('\n'),
    ).toEqual(['Succeeded']);
    const broken = await withFault('listOrders', 'listRepeatsFirstPage');
    const { reports, value } = await withMoreOrders(1_000, () => runHook({ listOrders: broken }));
    expect(reports.map((report) => report.status)).toEqual(['Failed']);
    expect(value.failed).toEqual(['list']);
    expect(value.lines).toContainEqual(
      expect.stringMatching(/^FAIL {2}list: order \d+ is listed twice in \d+ orders: the Scan repeats a page$/),
    );
  }, 180_000);

  it('passes a stage whose status index is not ACTIVE yet when the filtered page answers 503 with Retry-After', async () => {
    const table = { TableName: tables.orders.tableName };
    await tables.client.send(
      new UpdateTableCommand({ ...table, GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: 'status-index' } }] }),
    );
    // A stage whose index is not deployed yet: DynamoDB Local refuses writes while an index is DELETING.
    while (((await tables.client.send(new DescribeTableCommand(table))).Table?.GlobalSecondaryIndexes ?? []).length > 0) await sleep(100);
    try {
      const { reports, value } = await runHook();
      expect(value.failed, value.lines.join('\n')).toEqual([]);
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

  it('reads the bounded list a probe is answered to its end: the new list stops its Scan at the bound and gives its lease back, whatever the table holds', async () => {
    const runsBefore = fake.runs.length;
    // Scan pages of 100 orders: read whole, the 10,003 orders take more than 100 pages.
    const pagesOf100 = { ...functions.listOrders, environment: { ...functions.listOrders.environment, SCAN_PAGE_SIZE: '100' } };
    const { reports, value } = await withMoreOrders(10_000, () => runHook({ listOrders: pagesOf100 }));
    expect(reports.map((report) => report.status)).toEqual(['Succeeded']);
    const line = value.lines.find((entry) => entry.startsWith('PASS  list: '))!;
    expect(line).toMatch(/^PASS {2}list: 200, (\d+) valid orders in (\d+) bytes \(table item count 1000[34]\)$/);
    const [, count, bytes] = /(\d+) valid orders in (\d+) bytes/.exec(line)!;
    expect(Number(count)).toBeLessThan(10_003);
    expect(Number(bytes)).toBeGreaterThanOrEqual(probeListBytes);
    // The function itself (its own log, run whole by the local Lambda endpoint): it ended the array at the bound.
    const listRuns = fake.runs.slice(runsBefore).filter(({ arn }) => arn === arnOf('listOrders'));
    const lines = listRuns.flatMap(({ run }) => run.lines);
    // One list more than a canary key's slots, one after another, each ended at the bound.
    const listed = lines.filter((entry) => entry.message === 'orders listed');
    expect(listed).toHaveLength(config.tiers.canary.concurrentLists + 1);
    for (const entry of listed) expect(entry).toEqual(expect.objectContaining({ endedAtProbeBound: probeListBytes }));
    expect(listed.at(-1)!.count).toBe(Number(count));
    // Its lease, the item count, the Scan pages up to the bound (about 25) and those its 8 segments read ahead, the lease's release.
    const completed = lines.find((entry) => entry.message === 'request completed')!;
    expect(Number(completed.dynamoDbCalls)).toBeLessThan(50);
    expect(await leases()).toEqual([]);
  }, 180_000);

  it("touches no client's order, leaves no order of its own, and prints no key", async () => {
    const { output } = await runHook();
    expect(await probeOrdersLeft()).toEqual([]);
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
