/**
 * A production stage as the pre-traffic hook meets it, offline: a registry synthesized with its
 * bundles, every function's shipped bundle behind a local Lambda endpoint (./fake-aws.ts: new
 * versions 7, `live` aliases at 6), DynamoDB Local tables, the canary key and the cursor keys in a
 * local Secrets Manager, and the hook's own bundle under its template's settings. `runHook` runs it
 * once, as CodeDeploy (or `npm run probes`) would, and says what it reported and returned.
 */
import type { StoreOrdersStack } from '../../infra/cdk/store-orders-stack.ts';
import type { Registry } from '../../infra/registry.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { stages } from '../../infra/stage-config.ts';
import { cursorSecretName } from '../../functions/list-orders-paged/cursor-keys.ts';
import { canaryKeySecretName } from '../../shared/canary-key.ts';
import { canaryTier } from '../../shared/probes.ts';
import type { Order } from '../../shared/schemas.ts';
import { type DeployedFunction, deployedFunction, runBundleAsync } from './bundles.ts';
import { logicalId, synthApp } from './cdk.ts';
import { startFakeAws } from './fake-aws.ts';
import { createTestTables, dynamoDbEndpoint } from './local-api.ts';
import type { Template } from './template.ts';

export const config = stages.production;
// A key of the stage's form (prefix and 43 characters): the authorizer refuses any other without a lookup.
export const canaryKey = `${config.keyPrefix}${'pre-traffic-canary-key-0123456789abcdef'.padEnd(43, '0')}`;
export const usageIdentifierKey = 'c3'.repeat(32);
/** A function's ARN; its new version (7), the one the hook checks; and the version its `live` alias points at (6). */
export const functionArnOf = (name: string) => `arn:aws:lambda:us-east-1:123456789012:function:${name}`;
export const arnOf = (name: string) => `${functionArnOf(name)}:7`;
export const liveArnOf = (name: string) => `${functionArnOf(name)}:6`;
export const hookEvent = { DeploymentId: 'd-PRETRAFFIC', LifecycleEventHookExecutionId: 'hook-execution-1' };

export type HookEvent = { DeploymentId: string; LifecycleEventHookExecutionId: string } | { onDemand: true };
export type HookValue = { status: string; failed: string[]; busy: string[]; skipped: string[]; lines: string[]; summary: string };

/** The stage's running parts, once `start` has made them. */
export type HookStage = {
  fake: Awaited<ReturnType<typeof startFakeAws>>;
  tables: Awaited<ReturnType<typeof createTestTables>>;
  /** Each function's shipped bundle, by its name in the registry. */
  functions: Record<string, DeployedFunction>;
  hook: DeployedFunction;
  canaryKeyId: string;
};

type Synthesized = { s: StoreOrdersStack; t: Template; outdir: string };

/** The logical id of the version a deploy publishes of a function (its name carries the code's hash). */
const versionOf = (t: Template, functionLogicalId: string) =>
  Object.entries(t.Resources).find(
    ([, resource]) =>
      resource.Type === 'AWS::Lambda::Version' &&
      JSON.stringify(resource.Properties.FunctionName) === JSON.stringify({ Ref: functionLogicalId }),
  )![0];

/** The stage's parts: tables holding `orders`, the canary key, the local AWS endpoints, each function's bundle, the hook's. */
const startHookStage = async ({ s, t, outdir }: Synthesized, orders: readonly Order[], stage: HookStage) => {
  const targets = [s.authorizerFunction, ...s.routeFunctions.map(({ fn }) => fn)];
  stage.tables = await createTestTables(orders);
  const { tables } = stage;
  const created = await createApiKey(tables.apiKeys, {
    name: 'canary',
    prefix: '',
    key: canaryKey,
    tier: canaryTier,
    usageKey: usageIdentifierKey,
  });
  stage.fake = await startFakeAws();
  stage.canaryKeyId = created.item.keyId;
  stage.fake.secrets.set(
    canaryKeySecretName(config.stage),
    JSON.stringify({ key: canaryKey, keyId: created.item.keyId, usageIdentifierKey }),
  );
  // The v2 list seals a cursor once the store holds more than a page, with the stage's cursor keys.
  stage.fake.secrets.set(cursorSecretName(config.stage), JSON.stringify({ current: 'pre-traffic-cursor-key-0123456789abcdef' }));
  const names = {
    [logicalId(s, s.ordersTable)]: tables.orders.tableName,
    [logicalId(s, s.apiKeysTable)]: tables.apiKeys.tableName,
    [logicalId(s, s.listLeasesTable)]: tables.listLeases.tableName,
  };
  // The v2 list reads its cursor keys from Secrets Manager: the local endpoint answers for it.
  const endpoint = {
    DYNAMODB_ENDPOINT: dynamoDbEndpoint(),
    AWS_ENDPOINT_URL_SECRETS_MANAGER: stage.fake.endpoints.AWS_ENDPOINT_URL_SECRETS_MANAGER,
  };
  stage.functions = Object.fromEntries(
    targets.map((fn) => [fn.name, deployedFunction(t, outdir, logicalId(s, fn.function), names, endpoint)]),
  );
  // Each live alias points at version 6, today's bundle: the version a busy new version is compared with.
  for (const fn of targets) stage.fake.aliases.set(functionArnOf(fn.name), '6');
  const values = {
    ...Object.fromEntries(targets.map((fn) => [versionOf(t, logicalId(s, fn.function)), arnOf(fn.name)])),
    [logicalId(s, s.ordersTable)]: tables.orders.tableName,
    [logicalId(s, s.api)]: 'abc123',
    'AWS::Partition': 'aws',
    'AWS::Region': 'us-east-1',
    'AWS::AccountId': '123456789012',
  };
  stage.hook = deployedFunction(t, outdir, logicalId(s, s.preTrafficHook.function), values, {
    ...stage.fake.endpoints,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoDbEndpoint(),
  });
};

/** A stage of `registry` (default: the service's), synthesized now; `start` makes its parts (in a beforeAll). */
export const shippedHookStage = (registry?: Registry) => {
  const { stack, template, outdir } = synthApp({ bundle: [config.stackName], ...(registry === undefined ? {} : { registry }) });
  const synthesized = { s: stack('production'), t: template('production').toJSON() as Template, outdir };
  const stage = {} as HookStage;
  const start = (orders: readonly Order[]) => startHookStage(synthesized, orders, stage);

  /** One hook run with these function bundles: what it reported to CodeDeploy, what it returned, what it printed. */
  const runHook = async (
    overrides: Partial<Record<string, DeployedFunction>> = {},
    event: HookEvent = hookEvent,
    hookFn: DeployedFunction = stage.hook,
    live: Partial<Record<string, DeployedFunction>> = {},
  ) => {
    const { fake, functions } = stage;
    for (const [name, fn] of Object.entries({ ...functions, ...overrides })) fake.functions.set(arnOf(name), fn!);
    for (const [name, fn] of Object.entries({ ...functions, ...live })) fake.functions.set(liveArnOf(name), fn!);
    const before = fake.reports.length;
    const run = await runBundleAsync(hookFn, [{ name: 'hook', requestId: 'hook-1', event }]);
    const outcome = run.outcomes[0]!;
    const value = (outcome.outcome === 'returned' ? outcome.value : undefined) as HookValue;
    const reports = fake.reports.slice(before).filter((report) => 'DeploymentId' in event && report.deploymentId === event.DeploymentId);
    return { reports, value, output: run.output, outcome };
  };

  return { ...synthesized, stage, start, runHook, close: () => stage.fake?.close() };
};
