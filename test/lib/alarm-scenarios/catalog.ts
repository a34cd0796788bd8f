/**
 * The runs the alarm scenarios are made of, each one invocation of a function's shipped bundle
 * (test/lib/bundles.ts: the synthesized code under its template's settings) against DynamoDB Local
 * holding 5,000 orders, with the event API Gateway sends; and the same runs of the broken builds
 * (./faults.ts). What each printed (its EMF lines) and how it ended become the scenario's metrics.
 */
import { randomUUID } from 'node:crypto';
import { DescribeTableCommand, PutItemCommand, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { maxListMs } from '../../../functions/list-orders/list-cuts.ts';
import { metricNames } from '../../../shared/observability.ts';
import { matchRoute, proxyEvent } from '../../../infra/local/proxy-event.ts';
import type { StoreFunction } from '../../../infra/cdk/store-function.ts';
import type { StoreOrdersStack } from '../../../infra/cdk/store-orders-stack.ts';
import { createApiKey, revokeApiKey } from '../../../infra/ops/key-store.ts';
import { cursorSecretName } from '../../../functions/list-orders-paged/cursor-keys.ts';
import { basePath } from '../../../shared/routes.ts';
import { routes } from '../../../infra/registry.ts';
import { canaryTier } from '../../../shared/probes.ts';
import { statusIndex } from '../../../shared/status-index.ts';
import { brokenBuild } from '../broken-builds.ts';
import { type DeployedFunction, deployedFunction, runBundleAsync } from '../bundles.ts';
import { logicalId } from '../cdk.ts';
import { startFakeAws } from '../fake-aws.ts';
import type { Invocation } from '../lambda-runtime.ts';
import { createTestTables, dynamoDbEndpoint, order } from '../local-api.ts';
import type { Template } from '../template.ts';
import { functionRun, type FunctionRun } from './emissions.ts';
import { type FaultName, releaseFaults } from './faults.ts';
import type { Catalog } from './simulate.ts';
import { type RunName, runs, runTimes } from './traffic.ts';

/** A closed port: a DynamoDB endpoint nothing answers at. */
const unreachable = 'http://127.0.0.1:9';

/** The store: 5,000 orders, of which these ids are known: pending, cancelled, shipped, and one that does not exist. */
const ids = { pending: ['100001', '100002'], cancelled: '100003', shipped: '100004', missing: '999999999' };
const storeOrders = () => [
  ...Array.from({ length: 4_996 }, (_, i) =>
    order(String(200_000 + i), i % 3 === 0 ? 'shipped' : 'pending', { petId: String(i), quantity: '1', complete: false }),
  ),
  ...ids.pending.map((id) => order(id, 'pending', { petId: '1', quantity: '1' })),
  order(ids.cancelled, 'cancelled'),
  order(ids.shipped, 'shipped'),
];

const api = { accountId: '123456789012', apiId: 'abc123', domainName: 'abc123.execute-api.us-east-1.amazonaws.com' };
/** The authorization of a key of `tier` (the synthetic client's `canary` tier is answered a bounded list). */
const principal = (tier: string, keyId = `key_${tier === canaryTier ? 'c' : 'a'}123456789abcdef`) => {
  return { principalId: keyId, context: { keyId, keyName: 'scenario', tier } };
};

/** The REST proxy event (payload 1.0) of an allowed request, as API Gateway sends it. */
/** A key whose every list slot other lists hold (`list-slots-full`). */
const busyKeyId = 'key_f123456789abcdef';

const requestEvent = (stage: string, method: string, path: string, query: Record<string, string> = {}, tier = 'standard', keyId?: string) =>
  proxyEvent({
    api,
    stage,
    requestId: randomUUID(),
    match: matchRoute(routes, method, path)!,
    path,
    headers: [['Host', api.domainName]],
    query: Object.entries(query),
    body: null,
    auth: principal(tier, keyId),
    sourceIp: '203.0.113.9',
    protocol: 'HTTP/1.1',
    requestTimeEpoch: Date.now(),
  });

/** Each run's event, and how its client takes a streamed answer; `page-next` reads the cursor `page-first` gave. */
const invocations = (stage: string, keys: { valid: string; revoked: string }, cursor: string): Record<RunName, Invocation> => {
  const v1 = (method: string, path: string) => requestEvent(stage, method, `${basePath}${path}`);
  const v2 = (query: Record<string, string>) => requestEvent(stage, 'GET', '/v2/store/orders', query);
  const token = (key: string) => ({
    type: 'TOKEN',
    authorizationToken: `Bearer ${key}`,
    methodArn: `arn:aws:execute-api:us-east-1:${api.accountId}:${api.apiId}/${stage}/GET/v1/store/orders`,
  });
  const at = (name: RunName, event: unknown, extra: Partial<Invocation> = {}): Invocation => ({
    name,
    requestId: randomUUID(),
    event,
    ...extra,
  });
  return {
    'list-whole': at('list-whole', v1('GET', '/store/orders')),
    // A key whose list slots are all held by its other lists: 429 with Retry-After.
    'list-slots-full': at('list-slots-full', requestEvent(stage, 'GET', `${basePath}/store/orders`, {}, 'standard', busyKeyId)),
    // A client that reads the first 256 KB and leaves.
    'list-left': at('list-left', v1('GET', '/store/orders'), { clientLeavesAfterBytes: 256 * 1024 }),
    // The synthetic client's: its tier's list ends after 256 KB, read whole.
    'list-probe': at('list-probe', requestEvent(stage, 'GET', `${basePath}/store/orders`, {}, canaryTier)),
    'cancel-pending': at('cancel-pending', v1('DELETE', `/store/orders/${ids.pending[0]}`)),
    'cancel-again': at('cancel-again', v1('DELETE', `/store/orders/${ids.cancelled}`)),
    'cancel-shipped': at('cancel-shipped', v1('DELETE', `/store/orders/${ids.shipped}`)),
    'cancel-missing': at('cancel-missing', v1('DELETE', `/store/orders/${ids.missing}`)),
    'page-first': at('page-first', v2({ pageSize: '1000' })),
    'page-next': at('page-next', v2({ pageSize: '1000', cursor })),
    'page-not-ready': at('page-not-ready', v2({ status: 'pending' })),
    'authorize-valid': at('authorize-valid', token(keys.valid)),
    'authorize-refused': at('authorize-refused', token(keys.revoked)),
    'authorize-unreachable': at('authorize-unreachable', token(keys.valid)),
  };
};

type Site = { readonly s: StoreOrdersStack; readonly t: Template; readonly outdir: string };

/** Runs every run of the good builds and of each broken build's function, one invocation per process. */
export const buildCatalog = async ({ s, t, outdir }: Site): Promise<Catalog> => {
  const stage = s.config.stage;
  const tables = await createTestTables(storeOrders());
  // The index-not-ready page reads a table of its own whose status index is gone (a stage before the index is ACTIVE).
  const unindexed = await withoutStatusIndex(await createTestTables([order('7', 'pending')]));
  const valid = `${s.config.keyPrefix}${'scenario-valid-key-0123456789abcdef'.padEnd(43, '0')}`;
  const revoked = `${s.config.keyPrefix}${'scenario-revoked-key-0123456789abcdef'.padEnd(43, '0')}`;
  await createApiKey(tables.apiKeys, { name: 'scenario', prefix: '', key: valid, tier: 'standard', usageKey: 'd4'.repeat(32) });
  const gone = await createApiKey(tables.apiKeys, { name: 'revoked', prefix: '', key: revoked, usageKey: 'e5'.repeat(32) });
  await revokeApiKey(tables.apiKeys, gone.item.keyId);
  await holdEverySlot(tables, busyKeyId);
  const fake = await startFakeAws();
  try {
    fake.secrets.set(cursorSecretName(stage), JSON.stringify({ current: 'scenario-cursor-key-0123456789abcdef' }));
    const names = (orders: string) => ({
      [logicalId(s, s.ordersTable)]: orders,
      [logicalId(s, s.apiKeysTable)]: tables.apiKeys.tableName,
      [logicalId(s, s.listLeasesTable)]: tables.listLeases.tableName,
    });
    const environment = {
      DYNAMODB_ENDPOINT: dynamoDbEndpoint(),
      AWS_ENDPOINT_URL_SECRETS_MANAGER: fake.endpoints.AWS_ENDPOINT_URL_SECRETS_MANAGER,
    };
    const functions: Record<string, StoreFunction> = {
      authorizer: s.authorizerFunction,
      ...Object.fromEntries(s.routeFunctions.map(({ route, fn }) => [route.operation, fn])),
    };
    const deployed = (run: RunName): DeployedFunction =>
      deployedFunction(
        t,
        outdir,
        logicalId(s, functions[runs[run]]!.function),
        names(run === 'page-not-ready' ? unindexed.orders.tableName : tables.orders.tableName),
        run === 'authorize-unreachable' ? { ...environment, DYNAMODB_ENDPOINT: unreachable } : environment,
      );
    const first = await runBundleAsync(deployed('page-first'), [invocations(stage, { valid, revoked }, '')['page-first']]);
    const cursor = (JSON.parse((first.outcomes[0] as { value: { body: string } }).value.body) as { nextCursor: string }).nextCursor;
    const events = invocations(stage, { valid, revoked }, cursor);
    const good = {} as Record<RunName, FunctionRun>;
    for (const run of Object.keys(runs) as RunName[]) good[run] = await runOnce(run, deployed(run), events[run]);
    const broken: Partial<Record<FaultName, Partial<Record<RunName, FunctionRun>>>> = {};
    for (const [fault, definition] of Object.entries(releaseFaults) as [FaultName, (typeof releaseFaults)[FaultName]][]) {
      // A fault in the code is a build of its own; a fault in the configuration runs the shipped code.
      const codeDir = 'replace' in definition ? await brokenBuild(definition) : undefined;
      const affected = (Object.keys(runs) as RunName[]).filter(
        (run) => functions[runs[run]]!.name === functionNameOf(definition.handlerFile, s) && run !== 'authorize-unreachable',
      );
      const results: Partial<Record<RunName, FunctionRun>> = {};
      for (const run of affected) results[run] = await runOnce(run, ...asBroken(deployed(run), codeDir, definition, events[run]));
      broken[fault] = results;
    }
    return { good, broken };
  } finally {
    fake.close();
  }
};

/** One invocation of `fn`, as a scenario's run. */
const runOnce = async (run: RunName, fn: DeployedFunction, invocation: Invocation): Promise<FunctionRun> => {
  const { outcomes, lines } = await runBundleAsync(fn, [invocation]);
  const answered = functionRun(outcomes[0]!, lines, runTimes[run]);
  // A list cut at its maximum duration ran that long in production, whatever the shortened timeout here.
  return answered.emf.some(({ name }) => name === metricNames.listsRanTooLong) ? { ...answered, durationMs: maxListMs } : answered;
};

/**
 * `fn` as a fault deploys it (its broken build `codeDir`, else the shipped code; the fault's
 * environment), and its invocation; a fault whose list runs long gets its timeout, and a client
 * that reads on at 1 MB/s (above the minimum rate), so that only the list's own bound ends it.
 */
const asBroken = (
  fn: DeployedFunction,
  codeDir: string | undefined,
  definition: (typeof releaseFaults)[FaultName],
  invocation: Invocation,
): [DeployedFunction, Invocation] => {
  const again = { ...invocation, requestId: randomUUID() };
  const broken = {
    ...fn,
    codeDir: codeDir ?? fn.codeDir,
    ...('environment' in definition ? { environment: { ...fn.environment, ...definition.environment } } : {}),
  };
  if (!('timeoutSeconds' in definition)) return [broken, again];
  return [
    { ...broken, properties: { ...fn.properties, Timeout: definition.timeoutSeconds } },
    { ...again, clientBytesPerSecond: 1_000_000 },
  ];
};

/** Every list slot `keyId` may hold (more than any tier has), held by other lists for the next 10 minutes. */
const holdEverySlot = async (tables: Awaited<ReturnType<typeof createTestTables>>, keyId: string) => {
  const expiresAt = Math.floor(Date.now() / 1000) + 600;
  for (let slot = 0; slot < 10; slot++)
    await tables.client.send(
      new PutItemCommand({
        TableName: tables.listLeases.tableName,
        Item: { lease: { S: `${keyId}#${slot}` }, holder: { S: `another-list-${slot}` }, expiresAt: { N: String(expiresAt) } },
      }),
    );
};

/** The tables with their orders table's status index deleted, once DynamoDB Local has deleted it (it does so in the background). */
const withoutStatusIndex = async (tables: Awaited<ReturnType<typeof createTestTables>>) => {
  const table = { TableName: tables.orders.tableName };
  await tables.client.send(
    new UpdateTableCommand({ ...table, GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: statusIndex.name } }] }),
  );
  for (let tries = 0; (await tables.client.send(new DescribeTableCommand(table))).Table?.GlobalSecondaryIndexes?.length; tries++) {
    if (tries > 100) throw new Error('the status index was not deleted');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return tables;
};

/** The function whose handler file a fault breaks. */
const functionNameOf = (handlerFile: string, s: StoreOrdersStack) =>
  handlerFile === s.registry.authorizer.function.handlerFile
    ? 'authorizer'
    : s.routeFunctions.find(({ contract }) => contract.function.handlerFile === handlerFile)!.route.operation;
