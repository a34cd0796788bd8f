/**
 * What ships is what is tested. Each stage is synthesized with real bundling; each function's
 * bundle runs exactly as shipped, under its template's settings (handler, runtime, timeout,
 * memory, environment), on a stand-in for the Lambda Node.js runtime (./lambda-runtime.ts),
 * against DynamoDB Local, with the events API Gateway REST sends (built as the local gateway
 * builds them, infra/local/proxy-event.ts). What the functions print (as CloudWatch Logs would
 * receive it) is then checked against what the stage's alarms, dashboard, saved queries and
 * metric filters read.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DescribeTableCommand, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiSite, matchRoute, proxyEvent } from '../../infra/local/proxy-event.ts';
import { serviceName } from '../../infra/names.ts';
import { stages } from '../../infra/stage-config.ts';
import type { StoreFunction } from '../../infra/cdk/store-function.ts';
import { createApiKey, revokeApiKey } from '../../infra/ops/key-store.ts';
import { metricNames, metricsNamespace, probeMetricsNamespace } from '../../shared/observability.ts';
import { basePath } from '../../shared/routes.ts';
import { routes } from '../../infra/registry.ts';
import { statusIndex } from '../../shared/status-index.ts';
import { logicalId, repoRoot, stageNames, synthApp } from '../lib/cdk.ts';
import { createTestTables, dynamoDbEndpoint, order } from '../lib/local-api.ts';
import { deployedFunction, type Line, type Run, runBundle } from '../lib/bundles.ts';
import type { Invocation, Outcome } from '../lib/lambda-runtime.ts';
import { hookRequestIdPrefix } from '../../shared/probes.ts';
import {
  flatKeys,
  jsonPathFields,
  logQueries,
  type MetricRef,
  metricFilters,
  metricsRead,
  queryFields,
  resolve,
  type Template,
} from '../lib/template.ts';

const unreachableDynamoDb = 'http://127.0.0.1:9';

/** The stage's API as the events name it. */
const api: ApiSite = { accountId: '123456789012', apiId: 'abc123', domainName: 'abc123.execute-api.us-east-1.amazonaws.com' };

/** The REST API proxy event (payload 1.0) API Gateway sends for a request the authorizer allowed. */
const requestEvent = (stage: string, requestId: string, method: string, path: string, headers: Record<string, string> = {}) =>
  proxyEvent({
    api,
    stage,
    requestId,
    match: matchRoute(routes, method, `${basePath}${path}`)!,
    path: `${basePath}${path}`,
    headers: Object.entries({ Host: api.domainName!, 'User-Agent': 'contract-test', ...headers }),
    query: [],
    body: null,
    auth: { principalId: 'key_0123456789abcdef', context: { keyId: 'key_0123456789abcdef', keyName: 'contract', integrationLatency: 12 } },
    sourceIp: '203.0.113.7',
    protocol: 'HTTP/1.1',
    requestTimeEpoch: 1_795_000_000_000,
  });

const tokenEvent = (stage: string, token: string, method: string, path: string) => ({
  type: 'TOKEN',
  authorizationToken: token,
  methodArn: `arn:aws:execute-api:us-east-1:123456789012:abc123/${stage}/${method}${basePath}${path}`,
});

/**
 * A guard names the version a deploy moves to (`${…Version}`, the template's reference to the
 * version it publishes); a bundle emits the version it runs as (AWS_LAMBDA_FUNCTION_VERSION).
 * Either is "a version" here: test/infra/guards.test.ts checks each guard names its own function's.
 */
const anyVersion = (dimensions: Record<string, string>) =>
  Object.entries(dimensions)
    .map(([name, value]) => [name, name === 'version' ? '<a version>' : value])
    .sort();
const sameMetric = (a: Pick<MetricRef, 'namespace' | 'name' | 'dimensions'>, b: Pick<MetricRef, 'namespace' | 'name' | 'dimensions'>) =>
  a.namespace === b.namespace && a.name === b.name && JSON.stringify(anyVersion(a.dimensions)) === JSON.stringify(anyVersion(b.dimensions));

describe.each(stageNames)('the %s stage as deployed', (stage) => {
  const config = stages[stage];
  const { stack, template, outdir } = synthApp({ bundle: stageNames.map((name) => stages[name].stackName) });
  const s = stack(stage);
  const t = template(stage).toJSON() as Template;
  const key = `${config.keyPrefix}${'contract-test-key-that-must-never-be-logged'.padEnd(43, '0')}`;
  const unknownKey = `${config.keyPrefix}${'contract-test-unknown-key'.padEnd(43, '0')}`;
  const revokedKey = `${config.keyPrefix}${'contract-test-revoked-key'.padEnd(43, '0')}`;
  const otherStageKey = `${Object.values(stages).find((other) => other.keyPrefix !== config.keyPrefix)!.keyPrefix}${'contract-test-other-stage'.padEnd(43, '0')}`;
  // The usage identifiers API Gateway would hold for the two keys (64 hex digits each).
  const usageKey = 'a1'.repeat(32);
  const revokedUsageKey = 'b2'.repeat(32);
  const runs: Record<string, Run> = {};
  let leasesAfterRuns: () => Promise<Record<string, unknown>[]>;
  let slowLeases: () => Promise<Record<string, unknown>[]>;
  const requestIds: Record<string, { requestId: string; operation: string }> = {};

  /** A function of the stage as the template configures it, with its table names pointing at the test's tables. */
  const deployed = (fn: StoreFunction, tables: Record<string, string>, extra: Record<string, string> = {}) =>
    deployedFunction(t, outdir, logicalId(s, fn.function), tables, extra);

  const invocation = (name: string, operation: string, event: unknown): Invocation => {
    const requestId = `${stage}-${name}`;
    requestIds[requestId] = { requestId: (event as { requestContext?: { requestId: string } }).requestContext?.requestId ?? '', operation };
    return { name, requestId, event };
  };
  const http = (name: string, method: string, path: string, headers: Record<string, string> = {}) => {
    const operation = routes.find((route) => route.method === method && path.startsWith(route.path.split('{')[0]!))!.operation;
    return invocation(name, operation, requestEvent(stage, `api-${stage}-${name}`, method, path, headers));
  };
  const authorize = (name: string, token: string, method: string, path: string) =>
    invocation(name, method === 'GET' ? 'listOrders' : 'cancelOrder', tokenEvent(stage, token, method, path));

  beforeAll(async () => {
    const tables = await createTestTables([
      order('1', 'pending', { petId: '101', quantity: '1', shipDate: '2026-12-01T10:00:00Z', complete: false }),
      order('2', 'shipped', { petId: '102', quantity: '3', complete: true }),
      order('9223372036854775807', 'pending', { petId: '9007199254740993' }),
    ]);
    // An item another system wrote against the table contract: listed without its bad field, and counted.
    await tables.client.send(new PutCommand({ TableName: tables.orders.tableName, Item: { id: 5, status: 'pending', quantity: 'lots' } }));
    await createApiKey(tables.apiKeys, { name: 'contract', prefix: '', key, tier: 'high', usageKey });
    const revoked = await createApiKey(tables.apiKeys, { name: 'revoked', prefix: '', key: revokedKey, usageKey: revokedUsageKey });
    await revokeApiKey(tables.apiKeys, revoked.item.keyId);
    const names = {
      [logicalId(s, s.ordersTable)]: tables.orders.tableName,
      [logicalId(s, s.apiKeysTable)]: tables.apiKeys.tableName,
      [logicalId(s, s.listLeasesTable)]: tables.listLeases.tableName,
    };
    const endpoint = { DYNAMODB_ENDPOINT: dynamoDbEndpoint() };
    const down = { DYNAMODB_ENDPOINT: unreachableDynamoDb };
    const [list, cancel, paged] = s.routeFunctions.map(({ fn }) => fn) as [StoreFunction, StoreFunction, StoreFunction];

    runs.authorizer = runBundle(deployed(s.authorizerFunction, names, endpoint), [
      authorize('allow', `Bearer ${key}`, 'GET', '/store/orders'),
      authorize('refuse', `Bearer ${unknownKey}`, 'DELETE', '/store/orders/1'),
      authorize('revoked', `Bearer ${revokedKey}`, 'GET', '/store/orders'),
    ]);
    runs.authorizerDown = runBundle(deployed(s.authorizerFunction, names, down), [
      authorize('fail', `Bearer ${key}`, 'GET', '/store/orders'),
      // Tokens no key of this stage can be: refused though DynamoDB is down, so never looked up.
      authorize('other-stage', `Bearer ${otherStageKey}`, 'GET', '/store/orders'),
      authorize('one-short', `Bearer ${key.slice(0, -1)}`, 'GET', '/store/orders'),
    ]);
    runs.list = runBundle(deployed(list, names, endpoint), [
      http('list', 'GET', '/store/orders'),
      http('list-gzip', 'GET', '/store/orders', { 'Accept-Encoding': 'gzip' }),
    ]);
    runs.listDown = runBundle(deployed(list, names, down), [http('list-down', 'GET', '/store/orders')]);
    // A client that stops reading: its list is cut after LIST_STALL_SECONDS (shortened), and StalledListsCut says so.
    runs.listStalled = runBundle(deployed(list, names, { ...endpoint, LIST_STALL_SECONDS: '1' }), [
      { ...http('list-stalled', 'GET', '/store/orders'), clientStops: true },
    ]);
    // Clients gone before the function began: each response stream is already destroyed when the
    // body is piped into it. The key's leases all come back (the list after them lists).
    runs.listGone = runBundle(deployed(list, names, endpoint), [
      ...Array.from({ length: config.tiers[config.defaultTier].concurrentLists }, (_, i) => ({
        ...http(`list-gone-${i}`, 'GET', '/store/orders'),
        clientGone: true,
      })),
      http('list-after-gone', 'GET', '/store/orders'),
    ]);
    // Clients gone before the function began, answered with an Error record (which middy writes
    // with write() and end()): DynamoDB down (503, no lease taken) and a store over the list's size
    // limit (shortened; 406, the lease taken, then given back). Each invocation ends at once, not at
    // the function's timeout.
    runs.listGoneFailed = runBundle(deployed(list, names, down), [{ ...http('list-gone-down', 'GET', '/store/orders'), clientGone: true }]);
    runs.listGoneRefused = runBundle(deployed(list, names, { ...endpoint, LIST_MAX_ORDERS: '1' }), [
      { ...http('list-gone-too-large', 'GET', '/store/orders'), clientGone: true },
    ]);
    leasesAfterRuns = async () => (await tables.client.send(new ScanCommand({ TableName: tables.listLeases.tableName }))).Items ?? [];
    // A client that keeps reading, at 50,000 bytes/s, a quarter of the minimum rate: its list of 3,000
    // orders (Scan pages of up to 1,000, about 100 KB each, each taken within 2 s, inside the 3 s stall
    // window) is cut once it has waited LIST_STALL_SECONDS (shortened) for it. The rate is judged only
    // while the list waits for its client, so the client is slower than DynamoDB Local on a busy machine.
    const slowTables = await createTestTables(
      Array.from({ length: 3_000 }, (_, i) => order(String(10_000 + i), 'pending', { petId: String(i), quantity: '1', complete: false })),
    );
    const slowNames = {
      [logicalId(s, s.ordersTable)]: slowTables.orders.tableName,
      [logicalId(s, s.apiKeysTable)]: slowTables.apiKeys.tableName,
      [logicalId(s, s.listLeasesTable)]: slowTables.listLeases.tableName,
    };
    runs.listSlow = runBundle(deployed(list, slowNames, { ...endpoint, LIST_STALL_SECONDS: '3' }), [
      { ...http('list-slow', 'GET', '/store/orders'), clientBytesPerSecond: 50_000 },
    ]);
    // A list that runs its longest: its bound is the function's remaining time less a minute (14
    // minutes under the template's 15-minute timeout), so a timeout of 62 s (the only setting changed)
    // cuts it 2 s in, while its client still reads (3,000 orders at 50,000 bytes/s take 6 s).
    const shortLived = deployed(list, slowNames, endpoint);
    runs.listTooLong = runBundle({ ...shortLived, properties: { ...shortLived.properties, Timeout: 62 } }, [
      { ...http('list-too-long', 'GET', '/store/orders'), clientBytesPerSecond: 50_000 },
    ]);
    // Clients that leave mid-list, seen by the function (its response stream reset once the client
    // has about one Scan page of 100 orders, the plain one read at 5,000 bytes/s, so a second or
    // more in; the other gzip-compressed), then one that stays: the same key's next list is whole.
    runs.listLeft = runBundle(deployed(list, slowNames, { ...endpoint, SCAN_PAGE_SIZE: '100' }), [
      { ...http('list-left', 'GET', '/store/orders'), clientLeavesAfterBytes: 10_000, clientBytesPerSecond: 5_000 },
      { ...http('list-left-gzip', 'GET', '/store/orders', { 'Accept-Encoding': 'gzip' }), clientLeavesAfterBytes: 4_000 },
      http('list-after-left', 'GET', '/store/orders'),
    ]);
    slowLeases = async () => (await slowTables.client.send(new ScanCommand({ TableName: slowTables.listLeases.tableName }))).Items ?? [];
    runs.cancel = runBundle(deployed(cancel, names, endpoint), [
      http('cancel', 'DELETE', '/store/orders/1'),
      http('cancel-again', 'DELETE', '/store/orders/1'),
      http('cancel-shipped', 'DELETE', '/store/orders/2'),
      http('cancel-missing', 'DELETE', '/store/orders/404'),
      http('cancel-invalid', 'DELETE', '/store/orders/1.5'),
      http('cancel-int64-max', 'DELETE', '/store/orders/9223372036854775807'),
    ]);
    // The v2 list: one page holds the whole small store, so no cursor is sealed and its key secret is not read.
    const page = (name: string, query: Record<string, string> | null) =>
      invocation(name, 'listOrdersPaged', {
        ...requestEvent(stage, `api-${stage}-${name}`, 'GET', '/store/orders'),
        queryStringParameters: query,
      });
    // A status filter reads the status index (Query): its call metrics are what the dashboard's Query graphs read.
    runs.paged = runBundle(deployed(paged, names, endpoint), [
      page('page', null),
      page('page-pending', { status: 'pending' }),
      page('page-invalid', { pageSize: '0' }),
    ]);
    // A status filter while the status index is not there yet: a documented 503, counted as StatusIndexNotReady.
    const unindexed = await createTestTables([order('7', 'pending')]);
    const unindexedTable = { TableName: unindexed.orders.tableName };
    await unindexed.client.send(
      new UpdateTableCommand({ ...unindexedTable, GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: statusIndex.name } }] }),
    );
    // DynamoDB Local deletes the index in the background: a Query meanwhile meets it DELETING.
    for (
      let tries = 0;
      (await unindexed.client.send(new DescribeTableCommand(unindexedTable))).Table?.GlobalSecondaryIndexes?.length;
      tries++
    ) {
      if (tries > 100) throw new Error('the status index was not deleted');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    runs.pagedNotReady = runBundle(deployed(paged, { ...names, [logicalId(s, s.ordersTable)]: unindexed.orders.tableName }, endpoint), [
      page('page-not-ready', { status: 'pending' }),
    ]);
    runs.cancelDown = runBundle(deployed(cancel, names, down), [http('cancel-down', 'DELETE', '/store/orders/3')]);
    // The same busy answer to the pre-traffic hook's own event (its request id), which no guard counts.
    runs.cancelDownHook = runBundle(deployed(cancel, names, down), [
      invocation(
        'cancel-down-hook',
        'cancelOrder',
        requestEvent(stage, `${hookRequestIdPrefix}0123456789abcdef`, 'DELETE', '/store/orders/3', {}),
      ),
    ]);
    // A key whose every list slot other lists hold: its list answers 429, counted in ListsRefusedPerKey.
    const full = await createTestTables([order('1', 'pending')]);
    for (let slot = 0; slot < 10; slot++)
      await full.client.send(
        new PutCommand({
          TableName: full.listLeases.tableName,
          Item: { lease: `key_0123456789abcdef#${slot}`, holder: `another-list-${slot}`, expiresAt: Math.floor(Date.now() / 1000) + 600 },
        }),
      );
    const fullNames = { ...names, [logicalId(s, s.listLeasesTable)]: full.listLeases.tableName };
    runs.listSlotsFull = runBundle(deployed(list, fullNames, endpoint), [http('list-slots-full', 'GET', '/store/orders')]);
  }, 120_000);

  const outcome = (run: string, name: string) => runs[run]!.outcomes.find((candidate) => candidate.name === name)!;
  const allLines = () => Object.values(runs).flatMap((run) => run.lines);
  const logLines = () => allLines().filter((line) => !('_aws' in line));
  const emfLines = () => allLines().filter((line) => '_aws' in line);

  it('runs on the runtime the template names, and every bundle answers as the API promises', () => {
    for (const fn of [s.authorizerFunction, ...s.routeFunctions.map(({ fn }) => fn)]) {
      expect(t.Resources[logicalId(s, fn.function)]!.Properties).toMatchObject({ Runtime: 'nodejs24.x', Handler: 'index.handler' });
    }
    expect(process.versions.node.split('.')[0]).toBe('24');
    expect(outcome('authorizer', 'allow')).toMatchObject({
      outcome: 'returned',
      value: { policyDocument: { Statement: [{ Effect: 'Allow' }] } },
    });
    expect(outcome('authorizer', 'refuse')).toEqual({ name: 'refuse', outcome: 'threw', error: 'Unauthorized' });
    expect(outcome('authorizerDown', 'fail')).toMatchObject({ outcome: 'threw', error: expect.not.stringMatching(/^Unauthorized$/) });
    // A key that cannot exist (another stage's prefix, a character short) is refused without a lookup:
    // DynamoDB unreachable, a lookup would have failed (500), not answered Unauthorized (401).
    for (const name of ['other-stage', 'one-short'])
      expect(outcome('authorizerDown', name)).toEqual({ name, outcome: 'threw', error: 'Unauthorized' });
    const list = outcome('list', 'list') as Extract<Outcome, { outcome: 'streamed' }>;
    expect(list.prelude).toMatchObject({
      statusCode: 200,
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': `api-${stage}-list` },
    });
    const listed = Buffer.from(list.body, 'base64').toString('utf8');
    expect(listed).toContain('"id":9223372036854775807');
    expect(JSON.parse(listed)).toHaveLength(4);
    const gzip = outcome('list', 'list-gzip') as Extract<Outcome, { outcome: 'streamed' }>;
    expect(gzip.prelude).toMatchObject({ statusCode: 200, headers: { 'Content-Encoding': 'gzip' } });
    // The same orders; their order is whatever the parallel Scan segments answer in.
    const sorted = (json: string) => (JSON.parse(json) as { id: number }[]).map((entry) => JSON.stringify(entry)).sort();
    expect(sorted(gunzipSync(Buffer.from(gzip.body, 'base64')).toString('utf8'))).toEqual(sorted(listed));
    const status = (run: string, name: string) => (outcome(run, name) as { value?: { statusCode?: number } }).value?.statusCode;
    expect(
      ['cancel', 'cancel-again', 'cancel-shipped', 'cancel-missing', 'cancel-invalid', 'cancel-int64-max'].map((name) =>
        status('cancel', name),
      ),
    ).toEqual([204, 204, 409, 404, 400, 204]);
    expect(status('cancelDown', 'cancel-down')).toBe(503);
    const page = outcome('paged', 'page') as { value?: { statusCode?: number; headers?: Record<string, string>; body?: string } };
    expect(page.value).toMatchObject({
      statusCode: 200,
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': `api-${stage}-page` },
    });
    expect(page.value!.body).toContain('"id":9223372036854775807,"petId":9007199254740993');
    expect(JSON.parse(page.value!.body!)).toEqual({ orders: expect.any(Array) });
    expect(JSON.parse(page.value!.body!).orders).toHaveLength(4);
    expect(status('paged', 'page-invalid')).toBe(400);
    // A filtered page before the status index exists: 503 with the index's Retry-After, and StatusIndexNotReady, not a failure.
    expect(outcome('pagedNotReady', 'page-not-ready')).toMatchObject({ value: { statusCode: 503, headers: { 'Retry-After': '60' } } });
    expect(runs.pagedNotReady!.lines.filter((line) => '_aws' in line && metricNames.statusIndexNotReady in line)).toHaveLength(1);
    const pending = outcome('paged', 'page-pending') as { value?: { statusCode?: number; body?: string } };
    expect(pending.value?.statusCode).toBe(200);
    const pendingOrders = (JSON.parse(pending.value!.body!) as { orders: { status?: string }[] }).orders;
    expect(pendingOrders.length).toBeGreaterThan(0);
    expect(pendingOrders.every((entry) => entry.status === 'pending')).toBe(true);
    expect((outcome('listDown', 'list-down') as Extract<Outcome, { outcome: 'streamed' }>).prelude).toMatchObject({ statusCode: 503 });
    // Cut, not ended: its client must see a broken stream, never a list that looks whole.
    const stalled = outcome('listStalled', 'list-stalled') as Extract<Outcome, { outcome: 'streamed' }>;
    expect(stalled).toMatchObject({ prelude: { statusCode: 200 }, error: expect.stringContaining('took nothing for 1 s') });
    const cut = logLines().filter((line) => line.message === 'list cut: the client stopped reading');
    expect(cut).toHaveLength(1);
    // Its StalledListsCut is dated at the invocation's start, as Lambda dates the invocation's Errors (ListOrdersErrors subtracts it).
    const counted = runs.listStalled!.lines.filter((line) => '_aws' in line && 'StalledListsCut' in line) as {
      _aws: { Timestamp: number };
    }[];
    expect(counted).toHaveLength(1);
    expect(Date.parse(String(cut[0]!.timestamp)) - counted[0]!._aws.Timestamp).toBeGreaterThanOrEqual(1_000);
  });

  /** One invocation's lines `list left by its client` and its error lines (other than its answer's own). */
  const leftOf = (run: string, name: string) => {
    const lines = runs[run]!.lines.filter((line) => line.request_id === `api-${stage}-${name}`);
    return {
      left: lines.filter((line) => line.message === 'list left by its client'),
      errors: lines.filter((line) => line.level === 'ERROR' && line.message !== 'request failed'),
    };
  };
  /** A run's ListsLeftEarly counts (EMF lines carry no request id), in order. */
  const leftCounts = (run: string) =>
    runs[run]!.lines.filter((line) => '_aws' in line && metricNames.listsLeftEarly in line) as ({ _aws: { Timestamp: number } } & Line)[];

  it('gives every lease back, whichever way its list ended (whole, cut, its client gone before the first byte)', async () => {
    for (let i = 0; i < config.tiers[config.defaultTier].concurrentLists; i++) {
      // Its client gone before the first byte: the invocation resolves, and says so once.
      expect(outcome('listGone', `list-gone-${i}`)).toEqual({ name: `list-gone-${i}`, outcome: 'streamed', prelude: undefined, body: '' });
      const { left, errors } = leftOf('listGone', `list-gone-${i}`);
      expect(left).toEqual([expect.objectContaining({ level: 'INFO', statusCode: 200, outcome: 'left_by_client' })]);
      expect(errors).toEqual([]);
    }
    expect(leftCounts('listGone').map((line) => line[metricNames.listsLeftEarly])).toEqual(
      Array.from({ length: config.tiers[config.defaultTier].concurrentLists }, () => 1),
    );
    expect(outcome('listGone', 'list-after-gone')).toMatchObject({ outcome: 'streamed', prelude: { statusCode: 200 } });
    expect(await leasesAfterRuns()).toEqual([]);
  });

  it('ends at once, without an error, a list that failed or was refused after its client left, and gives its lease back', async () => {
    for (const [run, name, status, code] of [
      ['listGoneFailed', 'list-gone-down', 503, 'service_unavailable'],
      ['listGoneRefused', 'list-gone-too-large', 406, 'list_too_large'],
    ] as const) {
      // The pipe into the destroyed stream is refused: the answer is unsent, and the invocation resolves.
      expect(outcome(run, name)).toEqual({ name, outcome: 'streamed', prelude: undefined, body: '' });
      expect(runs[run]!.lines.find((line) => line.message === 'request failed' || line.message === 'request completed')).toMatchObject({
        statusCode: status,
        outcome: code,
      });
      expect(leftOf(run, name).left).toEqual([expect.objectContaining({ level: 'INFO', statusCode: status, outcome: 'left_by_client' })]);
      expect(leftCounts(run).map((line) => line[metricNames.listsLeftEarly])).toEqual([1]);
    }
    expect(await leasesAfterRuns()).toEqual([]);
  });

  it('ends a list whose client leaves mid-list without an error: it stops scanning, gives its lease back at once, and says so in one line and one ListsLeftEarly', async () => {
    for (const name of ['list-left', 'list-left-gzip']) {
      const left = outcome('listLeft', name) as Extract<Outcome, { outcome: 'streamed' }>;
      expect(left).toMatchObject({ outcome: 'streamed', prelude: { statusCode: 200 } });
      expect(left.error).toBeUndefined();
      const { left: lines, errors } = leftOf('listLeft', name);
      expect(lines).toEqual([
        expect.objectContaining({ level: 'INFO', statusCode: 200, outcome: 'left_by_client', firstByteMs: expect.any(Number) }),
      ]);
      expect(errors).toEqual([]);
      const own = runs.listLeft!.lines.filter((line) => line.request_id === `api-${stage}-${name}`);
      expect(own.map((line) => line.message)).not.toContain('response cut short');
    }
    // (zlib holds the compressed list back in chunks of 16 KB: the gzip one may have been read whole before its client left.)
    const plainLines = runs.listLeft!.lines.filter((line) => line.request_id === `api-${stage}-list-left`);
    expect(plainLines.map((line) => line.message)).not.toContain('orders listed');
    // The plain list stopped after a few of the store's 30 Scan pages of 100, and gave its lease back before the line.
    const plain = leftOf('listLeft', 'list-left').left[0]!;
    // Its count is dated at the invocation's start (as Lambda dates an Errors datapoint), a second or more before the line.
    const startedAt = Date.parse(String(plain.timestamp)) - Number(plain.latencyMs);
    expect(Number(plain.latencyMs)).toBeGreaterThan(900);
    const counts = leftCounts('listLeft');
    expect(counts.map((line) => line[metricNames.listsLeftEarly])).toEqual([1, 1]);
    expect(Math.abs(counts[0]!._aws.Timestamp - startedAt)).toBeLessThan(250);
    // Read whole (the next list), the store takes about 30 Scan pages and 35 calls in all; the left one
    // stopped with the pages its segments had read ahead and the 16 KB its stream buffers (17 calls
    // with 4 segments, 21 with 8).
    const whole = runs.listLeft!.lines.find((line) => line.request_id === `api-${stage}-list-after-left` && 'dynamoDbCalls' in line)!;
    expect(Number(plain.dynamoDbCalls)).toBeLessThan((Number(whole.dynamoDbCalls) * 2) / 3);
    // The same key's next list runs whole: both leases came back.
    const after = outcome('listLeft', 'list-after-left') as Extract<Outcome, { outcome: 'streamed' }>;
    expect(after).toMatchObject({ prelude: { statusCode: 200 } });
    expect(JSON.parse(Buffer.from(after.body, 'base64').toString('utf8'))).toHaveLength(3_000);
    expect(await slowLeases()).toEqual([]);
  });

  it('cuts a list whose client reads below the minimum rate, logs and counts it, and gives its lease back', async () => {
    const slow = outcome('listSlow', 'list-slow') as Extract<Outcome, { outcome: 'streamed' }>;
    expect(slow).toMatchObject({
      prelude: { statusCode: 200 },
      error: expect.stringMatching(/^the client took \d+ bytes\/s, below 200000$/),
    });
    const cut = runs.listSlow!.lines.filter((line) => line.message === 'list cut: the client reads too slowly');
    expect(cut).toHaveLength(1);
    expect(cut[0]).toMatchObject({ minBytesPerSecond: 200_000, bytesPerSecond: expect.any(Number) });
    expect(cut[0]!.bytesPerSecond as number).toBeLessThan(200_000);
    expect(runs.listSlow!.lines.filter((line) => '_aws' in line && 'StalledListsCut' in line)).toHaveLength(1);
    expect(await slowLeases()).toEqual([]);
  });

  it("cuts a list that ran its longest as the version's own failure: ListsRanTooLong, never StalledListsCut, and gives its lease back", async () => {
    const long = outcome('listTooLong', 'list-too-long') as Extract<Outcome, { outcome: 'streamed' }>;
    expect(long).toMatchObject({ prelude: { statusCode: 200 }, error: expect.stringMatching(/^the list ran \d+ s, its limit$/) });
    expect(runs.listTooLong!.lines.filter((line) => line.message === 'list cut: it ran too long')).toHaveLength(1);
    const counted = (name: string) => runs.listTooLong!.lines.filter((line) => '_aws' in line && name in line);
    expect(counted(metricNames.listsRanTooLong).map((line) => [line[metricNames.listsRanTooLong], line.version])).toEqual([[1, '1']]);
    expect(counted(metricNames.stalledListsCut)).toEqual([]);
    expect(await slowLeases()).toEqual([]);
  });

  it('records each documented refusal of its own (429, or 503 with Retry-After) as Busy of its version, and nothing else', () => {
    const busyOf = (run: string) =>
      runs[run]!.lines.filter((line) => '_aws' in line && metricNames.busy in line).map((line) => line[metricNames.busy]);
    // DynamoDB unreachable: 503 service_unavailable with Retry-After.
    expect(busyOf('cancelDown')).toEqual([1]);
    expect(busyOf('listDown')).toEqual([1]);
    expect(busyOf('pagedNotReady')).toEqual([1]);
    // Every slot of the key held: 429 too_many_requests, counted in ListsRefusedPerKey too.
    expect(outcome('listSlotsFull', 'list-slots-full')).toMatchObject({ prelude: { statusCode: 429 } });
    expect(busyOf('listSlotsFull')).toEqual([1]);
    expect(runs.listSlotsFull!.lines.filter((line) => '_aws' in line && metricNames.listsRefusedPerKey in line)).toHaveLength(1);
    // Answered, refused as the client's (400, 404, 409) or failed: not busy.
    expect(busyOf('cancel')).toEqual(Array<number>(runs.cancel!.outcomes.length).fill(0));
  });

  it("records no per-version answer for the pre-traffic hook's own events: the hook judges them, and its retries move no guard", () => {
    expect(outcome('cancelDownHook', 'cancel-down-hook')).toMatchObject({ value: { statusCode: 503 } });
    const perVersion = [metricNames.busy, metricNames.refusals, metricNames.faults, metricNames.answerLatency];
    expect(runs.cancelDownHook!.lines.filter((line) => '_aws' in line && perVersion.some((name) => name in line))).toEqual([]);
  });

  it("returns a valid key's usage identifier (never the key) and tier, and nothing that grants access for a revoked key", () => {
    const allow = outcome('authorizer', 'allow') as Extract<Outcome, { outcome: 'returned' }>;
    expect(allow.value).toEqual({
      principalId: expect.stringMatching(/^key_[0-9a-f]{16}$/),
      policyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Action: 'execute-api:Invoke',
            Effect: 'Allow',
            Resource: 'arn:aws:execute-api:us-east-1:123456789012:abc123/' + stage + '/*/*',
          },
        ],
      },
      // The seconds until the key's daily quota starts afresh, which a QUOTA_EXCEEDED answer's Retry-After maps.
      context: {
        keyId: (allow.value as { principalId: string }).principalId,
        keyName: 'contract',
        tier: 'high',
        quotaResetSeconds: expect.any(Number),
      },
      usageIdentifierKey: usageKey,
    });
    // A throw is all API Gateway gets for a revoked key: no policy, no usage identifier.
    expect(outcome('authorizer', 'revoked')).toEqual({ name: 'revoked', outcome: 'threw', error: 'Unauthorized' });
  });

  it('prints nothing but JSON lines, each with the stage service name', () => {
    expect(allLines().filter((line) => 'unparsable' in line)).toEqual([]);
    for (const line of logLines()) expect(line.service, JSON.stringify(line)).toBe(serviceName(config.stage));
  });

  it('logs every line of a request with its request id and operation, the lines written while the list streams included', () => {
    for (const [run, { lines }] of Object.entries(runs)) {
      for (const line of lines.filter((candidate) => !('_aws' in candidate))) {
        const invocation = requestIds[String(line.function_request_id)];
        expect(invocation, `${run}: a line outside any invocation: ${JSON.stringify(line)}`).toBeDefined();
        expect(line.operation, JSON.stringify(line)).toBe(invocation!.operation);
        // A TOKEN authorizer is not told the API request id: its lines are found through the access log's authorizerRequestId.
        if (!run.startsWith('authorizer')) expect(line.request_id, JSON.stringify(line)).toBe(invocation!.requestId);
      }
    }
    // Each request has its completion line, the streamed list's written when its last byte went out.
    const completed = logLines().filter((line) => line.message === 'request completed');
    expect(completed.map((line) => line.request_id)).toEqual(
      expect.arrayContaining([`api-${stage}-list`, `api-${stage}-list-gzip`, `api-${stage}-cancel`]),
    );
    expect(completed.find((line) => line.request_id === `api-${stage}-list`)).toMatchObject({ firstByteMs: expect.any(Number) });
  });

  it("lists each request's DynamoDB calls on its last line, as the runbook and the slowest-dynamodb-calls query read them", () => {
    const last = (requestId: string) => logLines().find((line) => line.request_id === requestId && Array.isArray(line.dynamoDb));
    const callsOf = (line: Record<string, unknown> | undefined) =>
      (line?.dynamoDb as { operation: string; table: string; ms: number; attempts: number; throttled: number; error?: string }[]) ?? [];
    const cancel = last(`api-${stage}-cancel`);
    expect(cancel).toMatchObject({
      message: 'request completed',
      dynamoDbCalls: 1,
      dynamoDbSlowestOperation: 'UpdateItem',
      dynamoDbThrottled: 0,
    });
    expect(callsOf(cancel)).toEqual([
      {
        operation: 'UpdateItem',
        table: expect.stringMatching(/orders/),
        ms: expect.any(Number),
        attempts: 1,
        capacity: expect.any(Number),
        throttled: 0,
      },
    ]);
    // DynamoDB unreachable: the call's attempts and its error are on the failed request's line.
    const down = last(`api-${stage}-cancel-down`);
    expect(down).toMatchObject({ message: 'request failed', statusCode: 503 });
    expect(callsOf(down)[0]).toMatchObject({ operation: 'UpdateItem', error: expect.any(String) });
    expect(callsOf(down)[0]!.attempts).toBeGreaterThan(1);
    // The streamed list's line, written when its last byte went out: its lease, its Scan pages, the lease given back.
    const list = last(`api-${stage}-list`);
    expect(list).toMatchObject({ message: 'request completed', firstByteMs: expect.any(Number) });
    for (const operation of ['PutItem', 'Scan', 'DeleteItem']) expect(callsOf(list).map((call) => call.operation)).toContain(operation);
    const granted = logLines().find((line) => line.message === 'authorization granted');
    expect(callsOf(granted)).toEqual([expect.objectContaining({ operation: 'GetItem', attempts: 1 })]);
  });

  it('emits each metric in the service namespace with exactly the dimensions the stage reads, and reads nothing it does not emit', () => {
    const emitted = emfLines().flatMap((line) => {
      const aws = line._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
      return aws.CloudWatchMetrics.flatMap(({ Namespace, Dimensions, Metrics }) =>
        Metrics.flatMap(({ Name }) =>
          Dimensions.map((set) => ({
            namespace: Namespace,
            name: Name,
            dimensions: Object.fromEntries(set.map((d) => [d, String(line[d])])),
          })),
        ),
      );
    });
    expect(emitted.length).toBeGreaterThan(0);
    for (const metric of emitted)
      expect(metric).toMatchObject({ namespace: metricsNamespace, dimensions: { service: serviceName(config.stage) } });

    const filters = metricFilters(t);
    const read = metricsRead(t).filter((metric) => metric.namespace === metricsNamespace);
    // Published by the probes themselves with PutMetricData (shared/probe-writes.ts), as
    // test/http/canary.test.ts and test/shipped/pre-traffic-hook.test.ts see it published.
    const probes = [{ namespace: probeMetricsNamespace, name: metricNames.probeBusy, dimensions: { service: serviceName(config.stage) } }];
    const produced = (metric: MetricRef) =>
      [...emitted, ...probes].some((candidate) => sameMetric(candidate, metric)) ||
      filters.some(
        (filter) =>
          filter.namespace === metric.namespace &&
          filter.name === metric.name &&
          // The dimension comes from a field of the access log line; the access log writes the service name there.
          Object.keys(filter.dimensions).join() === Object.keys(metric.dimensions).join() &&
          metric.dimensions.service === serviceName(config.stage),
      );
    expect(
      read.filter((metric) => !produced(metric)).map((metric) => `${metric.name} ${JSON.stringify(metric.dimensions)} (${metric.readBy})`),
    ).toEqual([]);
    const unread = emitted.filter((metric) => !read.some((candidate) => sameMetric(candidate, metric)));
    expect(unread).toEqual([]);
  });

  it("reads API Gateway's per-method metrics of methods that exist and publish them", () => {
    const api = Object.values(t.Resources).find((resource) => resource.Type === 'AWS::ApiGateway::RestApi')!.Properties;
    const stageProps = Object.values(t.Resources).find((resource) => resource.Type === 'AWS::ApiGateway::Stage')!.Properties;
    const enabled = (stageProps.MethodSettings as { ResourcePath: string; HttpMethod: string; MetricsEnabled?: boolean }[])
      .filter((setting) => setting.MetricsEnabled)
      // `/~1v1~1store~1orders`: a leading "/", then the resource path with "/" escaped as "~1".
      .map((setting) => `${setting.HttpMethod} ${setting.ResourcePath.slice(1).replaceAll('~1', '/')}`);
    const perMethod = metricsRead(t).filter((metric) => metric.namespace === 'AWS/ApiGateway' && 'Method' in metric.dimensions);
    expect(perMethod.length).toBeGreaterThan(0);
    for (const metric of perMethod) {
      expect(metric.dimensions).toMatchObject({ ApiName: api.Name, Stage: stageProps.StageName });
      expect(enabled).toContain(`${metric.dimensions.Method} ${metric.dimensions.Resource}`);
    }
  });

  it('gives every saved query and log widget the fields it reads, in the log groups it reads', () => {
    const accessLogFormat = String((stageOf(t).AccessLogSetting as { Format: string }).Format);
    const accessLine = JSON.parse(
      accessLogFormat.replaceAll(/\$context\.[A-Za-z.]+/g, (variable) => (/status|Latency$/.test(variable) ? '200' : '-')),
    );
    // The destination ARN ends with the log group (`…:log-group:${AccessLogs…}`).
    const destination = String(resolve((stageOf(t).AccessLogSetting as { DestinationArn: unknown }).DestinationArn));
    const accessLogGroup = `\${${/\$\{(\w+)(?:\.Arn)?\}$/.exec(destination)?.[1]}}`;
    const fieldsOf = (logGroup: string): Set<string> => {
      if (logGroup === accessLogGroup) return new Set(flatKeys(accessLine));
      const fn = [s.authorizerFunction, ...s.routeFunctions.map(({ fn }) => fn)].find(
        (candidate) => `\${${logicalId(s, candidate.logGroup)}}` === logGroup,
      );
      expect(fn, `a query reads ${logGroup}, which is no log group the test knows`).toBeDefined();
      const run =
        fn === s.authorizerFunction
          ? ['authorizer', 'authorizerDown']
          : fn === s.routeFunctions[0]!.fn
            ? ['list', 'listDown']
            : ['cancel', 'cancelDown'];
      return new Set(run.flatMap((name) => runs[name]!.lines.filter((line) => !('_aws' in line)).flatMap((line) => flatKeys(line))));
    };
    const queries = logQueries(t);
    expect(queries.length).toBeGreaterThan(6);
    for (const { readBy, logGroups, query } of queries) {
      const available = new Set(logGroups.map((group) => group.replace(/^\$\{(\w+)\}$/, '${$1}')).flatMap((group) => [...fieldsOf(group)]));
      const missing = queryFields(query).filter((field) => !available.has(field));
      expect(missing, `${readBy} reads fields no line of its log groups has`).toEqual([]);
    }
    for (const filter of metricFilters(t)) {
      expect(filter.logGroup).toBe(accessLogGroup);
      for (const field of [...jsonPathFields(filter.pattern), ...Object.values(filter.dimensions).flatMap(jsonPathFields)]) {
        expect(Object.keys(accessLine), `metric filter ${filter.id} reads ${field}`).toContain(field);
      }
    }
  });

  // Every "look at" of the runbook names something this stage has: an alarm, a saved query, a
  // dashboard graph, a metric, or a log field that the bundles really print.
  describe('docs/runbook.md, read against the template and what the bundles print', () => {
    const runbook = readFileSync(join(repoRoot, 'docs/runbook.md'), 'utf8').replaceAll(/\s*\n\s*/g, ' ');
    const prefix = `StoreOrders-${stage}-`;
    const named = (type: string, property: string) =>
      Object.values(t.Resources)
        .filter((resource) => resource.Type === type)
        .map((resource) => String(resource.Properties[property]));
    const dashboardTitles = () => {
      const dashboard = Object.values(t.Resources).find((resource) => resource.Type === 'AWS::CloudWatch::Dashboard')!;
      const body = JSON.parse(String(resolve(dashboard.Properties.DashboardBody))) as { widgets: { properties: { title?: string } }[] };
      return body.widgets.flatMap((widget) => (widget.properties.title === undefined ? [] : [widget.properties.title]));
    };
    const section = (from: string, to: string) => runbook.slice(runbook.indexOf(from), runbook.indexOf(to, runbook.indexOf(from)));
    const ticked = (text: string, pattern = /`([^`]+)`/g) => [...text.matchAll(pattern)].map((match) => match[1]!);

    it('explains an alarm of the stack in each alarm section, and every alarm that notifies has one', () => {
      const alarms = [...named('AWS::CloudWatch::Alarm', 'AlarmName'), ...named('AWS::CloudWatch::CompositeAlarm', 'AlarmName')];
      const notifying = Object.values(t.Resources)
        .filter((resource) => /^AWS::CloudWatch::(Composite)?Alarm$/.test(resource.Type) && resource.Properties.AlarmActions !== undefined)
        .map((resource) => String(resource.Properties.AlarmName).slice(prefix.length));
      const page = readFileSync(join(repoRoot, 'docs/runbook.md'), 'utf8');
      const alarmsPart = page.slice(page.indexOf('\n## Alarms\n'), page.indexOf('\n## Procedures\n'));
      const sections = ticked(alarmsPart, /^### (\w+)$/gm);
      expect(sections.filter((heading) => !alarms.includes(`${prefix}${heading}`))).toEqual([]);
      expect(notifying.filter((id) => !sections.includes(id))).toEqual([]);
      // Links to an alarm's section name an alarm too.
      const linked = ticked(runbook, /\[(\w+)\]\(#\w+\)/g).filter((name) => /^[A-Z]/.test(name));
      expect(linked.filter((name) => !alarms.includes(`${prefix}${name}`))).toEqual([]);
    });

    it('names only saved queries the stage has, and lists them all', () => {
      const queries = named('AWS::Logs::QueryDefinition', 'Name').map((name) => name.slice(`StoreOrders-${stage}/`.length));
      const mentioned = ticked(runbook).filter((token) => /^[a-z]+(-[a-z0-9]+)+$/.test(token) && !token.startsWith('store-orders'));
      const alone = ticked(runbook, /`([\w-]+)` query/g);
      expect([...mentioned, ...alone].filter((query) => !queries.includes(query))).toEqual([]);
      const table = ticked(section('| query', '3. '), /\| `([\w-]+)`/g);
      expect(table.sort()).toEqual([...queries].sort());
    });

    it('names only dashboard graphs the stage has', () => {
      const titles = dashboardTitles();
      const graphs = [
        ...ticked(runbook, /"([^"]+)" graphs?/g),
        ...ticked(runbook, /dashboard's "([^"]+)"/g),
        ...ticked(runbook, /"([^"]+)" and "[^"]+" graphs/g),
      ];
      expect(graphs.length).toBeGreaterThan(5);
      expect(graphs.filter((graph) => !titles.some((title) => title.startsWith(graph)))).toEqual([]);
    });

    it('names only metrics the stage reads or emits', () => {
      const known = new Set([
        ...metricsRead(t).map((metric) => metric.name),
        ...metricFilters(t).map((filter) => filter.name),
        ...emfLines().flatMap((line) =>
          (line._aws as { CloudWatchMetrics: { Metrics: { Name: string }[] }[] }).CloudWatchMetrics.flatMap((m) =>
            m.Metrics.map(({ Name }) => Name),
          ),
        ),
      ]);
      // Emitted on a path these runs do not take (a key over its tier's concurrent lists): the constant the code emits.
      known.add(metricNames.listsRefusedPerKey);
      const metrics = [...runbook.matchAll(/[Mm]etrics? `(\w+)`(?: and `(\w+)`)?/g)].flatMap((match) => match.slice(1).filter(Boolean));
      expect(metrics.length).toBeGreaterThan(5);
      expect(metrics.filter((metric) => !known.has(metric!))).toEqual([]);
    });

    it('names only log fields the bundles print and the access log writes, and sends nobody to X-Ray for DynamoDB calls', () => {
      const printed = logLines();
      const keys = new Set(printed.flatMap((line) => flatKeys(line)));
      // Logs Insights flattens arrays too (dynamoDb.0.ms): the keys of each listed call.
      for (const line of printed)
        for (const value of Object.values(line))
          if (Array.isArray(value)) for (const entry of value) for (const key of flatKeys(entry)) keys.add(key);
      const values = new Set(printed.flatMap((line) => Object.values(line).filter((value) => typeof value === 'string')));
      const functionFields = ticked(section('- one log group per function', '- the API access log group')).filter((token) =>
        /^[a-z_][A-Za-z_.]*$/.test(token),
      );
      expect(functionFields.length).toBeGreaterThan(20);
      const accessLogFormat = String((stageOf(t).AccessLogSetting as { Format: string }).Format);
      // Lambda sets _X_AMZN_TRACE_ID for each invocation of a traced function, which Powertools logs; the runtime stand-in does not.
      const traced = [s.authorizerFunction, ...s.routeFunctions.map(({ fn }) => fn)].every(
        (fn) => (t.Resources[logicalId(s, fn.function)]!.Properties.TracingConfig as { Mode?: string } | undefined)?.Mode === 'Active',
      );
      expect(traced).toBe(true);
      const printedElsewhere = (field: string) => field === 'xray_trace_id' || accessLogFormat.includes(`"${field}"`);
      expect(functionFields.filter((field) => !keys.has(field) && !values.has(field) && !printedElsewhere(field))).toEqual([]);
      const accessFields = ticked(section('- the API access log group', '- API Gateway execution logs')).filter((token) =>
        /^[a-z]\w*$/.test(token),
      );
      expect(accessFields.length).toBeGreaterThan(20);
      // The bullet also names the function lines' key an access log field points at (`function_request_id`).
      expect(accessFields.filter((field) => !accessLogFormat.includes(`"${field}"`) && !keys.has(field))).toEqual([]);
      expect(runbook).not.toMatch(/X-Ray (for|traces for|to find)/);
    });
  });

  it('never prints a key, valid or not', () => {
    for (const run of Object.values(runs)) {
      expect(run.output).not.toContain(key);
      expect(run.output).not.toContain(unknownKey);
      expect(run.output).not.toContain(revokedKey);
      // The usage identifier is not the secret, but it is a credential of API Gateway's: not logged either.
      expect(run.output).not.toContain(usageKey);
      expect(run.output).not.toContain(key.slice(config.keyPrefix.length));
    }
  });
});

const stageOf = (t: Template) => Object.values(t.Resources).find((resource) => resource.Type === 'AWS::ApiGateway::Stage')!.Properties;
