/**
 * The pre-traffic hook as shipped: its bundle (with every function's known answers, collected from
 * the registry), under its template's settings, invoking the shipped function bundles (run by the
 * runtime stand-in behind a local Lambda endpoint, ../lib/hook-stage.ts) against DynamoDB Local,
 * and reporting to a local CodeDeploy endpoint. Once with today's bundles, then with deliberately
 * broken builds (../lib/broken-builds.ts): each must make the hook report Failed, naming what failed. The local Lambda endpoint runs each invocation whole and
 * then sends its answer, as Lambda may treat a caller that stopped reading: so the list's own log
 * shows what a probe's list cost.
 */
import { BatchWriteCommand, DeleteCommand, NumberValue, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DescribeTableCommand, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { preTrafficHookFunctionName } from '../../infra/names.ts';
import { putOrders } from '../../infra/local/seed.ts';
import { ensureStatusIndex } from '../../infra/local/local-tables.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canaryKeySecretName } from '../../shared/canary-key.ts';
import { isProbeOrderId, probeListBytes, probeOrdersCountedAtMost } from '../../shared/probes.ts';
import { acquireListLease, releaseListLease } from '../../functions/list-orders/list-leases.ts';
import { order } from '../lib/local-api.ts';
import { brokenBuild, faults } from '../lib/broken-builds.ts';
import type { DeployedFunction } from '../lib/bundles.ts';
import { arnOf, canaryKey, config, functionArnOf, hookEvent, liveArnOf, shippedHookStage, usageIdentifierKey } from '../lib/hook-stage.ts';

/**
 * A test's bound on each hook run it waits for: the hook reports within its 5-minute timeout by
 * design (its checks stop 30 s before it), however busy the machine; 2 minutes was not enough there.
 */
const oneHookRun = 330_000;
const twoHookRuns = 2 * oneHookRun;

describe('the pre-traffic hook, as shipped, against the shipped functions', () => {
  const { stage, start, runHook, close } = shippedHookStage();
  let fake: (typeof stage)['fake'];
  let tables: (typeof stage)['tables'];
  let functions: Record<'authorizer' | 'listOrders' | 'cancelOrder' | 'listOrdersPaged', DeployedFunction>;
  let hook: DeployedFunction;
  let canaryKeyId: string;
  const leaseTable = () => ({ client: tables.client, tableName: tables.listLeases.tableName });

  beforeAll(async () => {
    await start([
      order('1', 'pending', { petId: '101', quantity: '1', complete: false }),
      order('2', 'shipped', { petId: '102', quantity: '3', complete: true }),
      order('9223372036854775807', 'pending', { petId: '9007199254740993' }),
    ]);
    ({ fake, tables, hook, canaryKeyId } = stage);
    functions = stage.functions as typeof functions;
  }, 300_000);
  afterAll(() => close());

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
      expect(value.failed).toEqual(['v1 list']);
    }
  }, 240_000);

  it(
    'reports Succeeded before its own timeout when the new and the live version stay throttled, the list BUSY and counted in ProbeBusy, never failed',
    async () => {
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
        expect(value.busy[0]).toBe('v1 list');
        expect(value.lines).toContainEqual(
          expect.stringMatching(
            /^BUSY {2}v1 list: still busy at the deadline after \d+ tries \(last: throttled by Lambda\); the live version 6 answered 0 of [1-5]$/,
          ),
        );
        // The checks after it ran in the time left, or were not started or stopped by the deadline (busy: the list took their time).
        for (const line of value.lines.slice(3))
          expect(line).toMatch(
            /^(PASS {2}|BUSY {2}.*: (not started by|stopped at) the deadline: the checks' time went to a busy service$)/,
          );
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
    },
    oneHookRun,
  );

  it(
    'reports Failed with the reason when its own environment is invalid, instead of failing at init',
    async () => {
      const broken = { ...hook, environment: { ...hook.environment, METHOD_ARN_PREFIX: 'not-an-arn' } };
      const { reports, value, outcome } = await runHook({}, { DeploymentId: 'd-BADENV', LifecycleEventHookExecutionId: 'hook-e' }, broken);
      expect(outcome.outcome, JSON.stringify(outcome)).toBe('returned');
      expect(reports.map((report) => report.status)).toEqual(['Failed']);
      expect(value.lines).toEqual([expect.stringMatching(/^FAIL {2}settings: the hook's environment is invalid: .*METHOD_ARN_PREFIX/)]);
    },
    oneHookRun,
  );
  const withFault = async (name: keyof typeof functions, fault: keyof typeof faults) => ({
    ...functions[name],
    codeDir: await brokenBuild(faults[fault]),
  });

  it(
    "reports Succeeded to CodeDeploy for today's bundles, after checking every operation, a pending order of its own cancelled",
    async () => {
      const before = fake.metricData.length;
      const invokedBefore = fake.invoked.length;
      const { reports, value, outcome } = await runHook();
      expect(outcome.outcome, JSON.stringify(outcome)).toBe('returned');
      expect(reports).toEqual([{ deploymentId: 'd-PRETRAFFIC', lifecycleEventHookExecutionId: 'hook-execution-1', status: 'Succeeded' }]);
      expect(value.failed).toEqual([]);
      expect(value.lines).toEqual([
        expect.stringMatching(/^PASS {2}authorizer allows the key: Allow for key_[0-9a-f]{16}, with its usage identifier$/),
        'PASS  authorizer refuses a wrong key: Unauthorized',
        // Once more than the canary key's list slots, one after another: each list gave its lease back.
        expect.stringMatching(/^PASS {2}v1 list: 200, 3 valid orders in \d+ bytes, each id once \(read 3 times in a row\)$/),
        expect.stringMatching(/^PASS {2}v1 list with gzip: 200 gzip, 3 valid orders in \d+ bytes, each id once$/),
        expect.stringMatching(
          /^PASS {2}cancel of a pending order, and again: order -92233720368547757\d\d: 204, X-Request-Id pre-traffic-[0-9a-f]+, stored cancelled at \S+; again 204, unchanged$/,
        ),
        expect.stringMatching(
          /^PASS {2}cancel of a shipped order: order -92233720368547757\d\d: 409 order_already_shipped, X-Request-Id pre-traffic-[0-9a-f]+, stored shipped as it was$/,
        ),
        expect.stringMatching(
          /^PASS {2}cancel of an absent order: order -9223372036854775808: 404 order_not_found, X-Request-Id pre-traffic-[0-9a-f]+$/,
        ),
        expect.stringMatching(/^PASS {2}cancel of a malformed id: order not-an-order-id: 400 invalid_order_id/),
        // Its own orders are gone by then: the pages are the store's three orders.
        'PASS  v2 pages of one through their cursors: 3 pages of one, 3 distinct orders: each cursor moved on',
        'PASS  v2 page filtered by status: 200, 2 orders, each pending, the last page',
        expect.stringMatching(/^PASS {2}v2 page filtered by ship date: 200, 0 orders, each shipped in /),
      ]);
      // Each function was invoked at its new version, by ARN; the run was never busy, and says so.
      expect(new Set(fake.invoked.slice(invokedBefore))).toEqual(
        new Set(['authorizer', 'listOrders', 'cancelOrder', 'listOrdersPaged'].map(arnOf)),
      );
      expect(fake.metricData.slice(before).map((datum) => [datum.MetricName, datum.Value])).toEqual([['ProbeBusy', 0]]);
    },
    oneHookRun,
  );

  const everyCancelBut = ['cancel of a pending order, and again', 'cancel of a shipped order', 'cancel of an absent order'];
  it.each([
    ['authorizer', 'authorizer', 'refuses every key', ['authorizer allows the key']],
    ['listOrders', 'listOrders', 'answers [] whatever the table holds', ['v1 list']],
    ['listOrders', 'listOrderTwice', 'lists an order twice', ['v1 list', 'v1 list with gzip']],
    ['cancelOrder', 'cancelOrder', 'answers 204 without writing', everyCancelBut],
    ['cancelOrder', 'cancelShipped', 'cancels a shipped order (204, and written)', ['cancel of a shipped order']],
    ['cancelOrder', 'cancelPendingConflict', 'answers 409 for a pending order', everyCancelBut],
    ['listOrdersPaged', 'secondPageInvalid', 'answers the second page 400 invalid_cursor', ['v2 pages of one through their cursors']],
    [
      'listOrdersPaged',
      'pagedCursorIgnored',
      'answers the first page again whatever the cursor',
      ['v2 pages of one through their cursors'],
    ],
    ['listOrdersPaged', 'pagedFilterIgnored', 'ignores the filters', ['v2 page filtered by status', 'v2 page filtered by ship date']],
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
    oneHookRun,
  );

  /** Leases a broken list left behind under the hooks' identities (they would refuse the next run's lists). */
  const clearHookLeases = async () => {
    for (const item of await leases())
      if (String(item.lease).startsWith('pre-traffic-'))
        await tables.client.send(new DeleteCommand({ TableName: tables.listLeases.tableName, Key: { lease: item.lease } }));
  };

  it.each([
    ['cancelOrder', 'cancelUnavailable', 'answers 503 with Retry-After (DynamoDB unreachable)', everyCancelBut],
    ['listOrders', 'listLeaseNeverFree', "answers 429 (the key's list slots always full)", ['v1 list', 'v1 list with gzip']],
    ['listOrders', 'listLeaseNeverReleased', 'never gives its list lease back', ['v1 list', 'v1 list with gzip']],
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
                `^FAIL {2}${check}: busy in each of 5 tries \\(last: answered (429|503) .*\\) while the live version 6, asked beside each, answered as expected in [45]$`,
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
    twoHookRuns,
  );

  it(
    'reports Failed for a build whose list repeats its first Scan page, on a store its bounded list reads in several pages',
    async () => {
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
      expect(value.failed).toEqual(['v1 list', 'v1 list with gzip']);
      expect(value.lines).toContainEqual(expect.stringMatching(/^FAIL {2}v1 list: order \d+ is listed twice in \d+ orders$/));
    },
    twoHookRuns,
  );

  it(
    'passes a stage whose status index is not ACTIVE yet when the filtered page answers 503 with Retry-After',
    async () => {
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
            /^PASS {2}v2 page filtered by status: the status index is not ready for Query: 503 service_unavailable, X-Request-Id /,
          ),
        );
      } finally {
        await ensureStatusIndex(tables.client, tables.orders.tableName);
      }
    },
    oneHookRun,
  );

  it(
    'reports Failed, saying how to fix it, when the canary key was never created',
    async () => {
      const secret = fake.secrets.get(canaryKeySecretName(config.stage))!;
      fake.secrets.delete(canaryKeySecretName(config.stage));
      try {
        const { reports, value } = await runHook();
        expect(reports.map((report) => report.status)).toEqual(['Failed']);
        expect(value.lines).toEqual([expect.stringMatching(/^FAIL {2}canary key: .*npm run keys -- canary --stage/)]);
      } finally {
        fake.secrets.set(canaryKeySecretName(config.stage), secret);
      }
    },
    oneHookRun,
  );

  it(
    'refuses a wrong key made of fresh random characters: none of the canary key beyond its public prefix travels',
    async () => {
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
    },
    oneHookRun,
  );

  it(
    'reads the bounded list a probe is answered to its end: the new list stops its Scan at the bound and gives its lease back, whatever the table holds',
    async () => {
      const runsBefore = fake.runs.length;
      // Scan pages of 100 orders: read whole, the 10,003 orders take more than 100 pages.
      const pagesOf100 = { ...functions.listOrders, environment: { ...functions.listOrders.environment, SCAN_PAGE_SIZE: '100' } };
      const { reports, value } = await withMoreOrders(10_000, () => runHook({ listOrders: pagesOf100 }));
      expect(reports.map((report) => report.status)).toEqual(['Succeeded']);
      const line = value.lines.find((entry) => entry.startsWith('PASS  v1 list: '))!;
      expect(line).toMatch(/^PASS {2}v1 list: 200, (\d+) valid orders in (\d+) bytes, each id once \(read 3 times in a row\)$/);
      const [, count, bytes] = /(\d+) valid orders in (\d+) bytes/.exec(line)!;
      expect(Number(count)).toBeLessThan(10_003);
      expect(Number(bytes)).toBeGreaterThanOrEqual(probeListBytes);
      // The function itself (its own log, run whole by the local Lambda endpoint): it ended the array at the bound.
      const listRuns = fake.runs.slice(runsBefore).filter(({ arn }) => arn === arnOf('listOrders'));
      const lines = listRuns.flatMap(({ run }) => run.lines);
      // One list more than a canary key's slots, one after another, then one with gzip, each ended at the bound.
      const listed = lines.filter((entry) => entry.message === 'orders listed');
      expect(listed).toHaveLength(config.tiers.canary.concurrentLists + 2);
      for (const entry of listed) expect(entry).toEqual(expect.objectContaining({ endedAtProbeBound: probeListBytes }));
      expect(listed[config.tiers.canary.concurrentLists]!.count).toBe(Number(count));
      // Its lease, the item count, the Scan pages up to the bound (about 25) and those its 8 segments read ahead, the lease's release.
      const completed = lines.find((entry) => entry.message === 'request completed')!;
      expect(Number(completed.dynamoDbCalls)).toBeLessThan(50);
      expect(await leases()).toEqual([]);
    },
    twoHookRuns,
  );

  it(
    "touches no client's order, leaves no order of its own, and prints no key",
    async () => {
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
    },
    oneHookRun,
  );

  it(
    'runs on demand (npm run probes) against the versions its settings name, reporting to no one',
    async () => {
      const before = fake.reports.length;
      const { value, outcome } = await runHook({}, { onDemand: true });
      expect(outcome.outcome, JSON.stringify(outcome)).toBe('returned');
      expect(value.status, value.lines.join('\n')).toBe('Succeeded');
      expect(value.lines).toHaveLength(11);
      expect(value.summary).toBe('All 11 checks passed.');
      expect(fake.reports.length).toBe(before);
      expect(await probeOrdersLeft()).toEqual([]);
    },
    oneHookRun,
  );

  it(
    'fails closed, naming the checks it could not set up, when it may not write its probe orders',
    async () => {
      // A table it cannot write (as IAM refusing its PutItem would): the release is not let through unchecked.
      const denied = { ...hook, environment: { ...hook.environment, ORDERS_TABLE: 'no-such-orders-table' } };
      const { reports, value } = await runHook({}, { DeploymentId: 'd-NOWRITE', LifecycleEventHookExecutionId: 'hook-w' }, denied);
      expect(reports.map((report) => report.status)).toEqual(['Failed']);
      expect(value.failed).toEqual(expect.arrayContaining(['cancel of a pending order, and again', 'cancel of a shipped order']));
      expect(value.lines).toContainEqual(
        expect.stringMatching(
          /^SETUP cancel of a pending order, and again: could not write its pending probe order in no-such-orders-table: /,
        ),
      );
    },
    oneHookRun,
  );

  it(
    'is what `npm run probes -- --stage production` invokes on demand: its lines, and exit code 0 when every check passed',
    async () => {
      fake.functions.set(preTrafficHookFunctionName(config.stage), hook);
      for (const [name, fn] of Object.entries(functions)) fake.functions.set(arnOf(name), fn);
      const { status, output } = await new Promise<{ status: number | null; output: string }>((resolve) => {
        execFile(
          'npm',
          ['run', '--silent', 'probes', '--', '--stage', config.stage],
          { env: { ...process.env, ...fake.endpoints, AWS_REGION: 'us-east-1' }, timeout: 150_000 },
          (error, stdout, stderr) =>
            resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : null, output: `${stdout}${stderr}` }),
        );
      });
      expect(output).toContain(`invoking ${preTrafficHookFunctionName(config.stage)} on demand`);
      expect(output).toMatch(/^PASS {2}cancel of a pending order, and again: /m);
      expect(output).toContain('Succeeded: All 11 checks passed.');
      expect(status).toBe(0);
    },
    twoHookRuns,
  );
});
