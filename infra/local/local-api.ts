import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createDocumentClient, type LocalCredentials } from '../../shared/dynamo.ts';
import { routes as defaultRoutes, type Route } from '../../shared/routes.ts';
import { type FunctionName, functionEnvironment, functionSettings } from '../function-settings.ts';
import type { FunctionSettings } from '../operations.ts';
import { type FunctionStage, listSlotProblems, localStage } from '../stage-config.ts';
import { type Gateway, startGateway } from './gateway.ts';
import { credentialsEnvironment } from './dynamodb-local.ts';
import { clientBounds } from './gateway-server.ts';
import { type Authorizer, installLambdaStreamingGlobals, type LambdaHandler, runInvocationsConcurrently } from './lambda-runtime.ts';
import { createRateLimiter, type LocalLimits } from './rate-limits.ts';
import { ensureTable, listLeasesTableKey } from './tables.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
let instances = 0;

export type LocalApiOptions = {
  readonly port: number;
  readonly dynamoDbEndpoint: string;
  /**
   * What that DynamoDB answers to (the credentials of the DynamoDB Local it is); the functions get
   * them as Lambda gives a function its credentials, in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
   * Default: those already in the environment (else `local`).
   */
  readonly dynamoDbCredentials?: LocalCredentials;
  readonly ordersTable: string;
  readonly apiKeysTable: string;
  /** The list's leases (created here when missing, as the stack creates it on AWS). */
  readonly listLeasesTable: string;
  /** The stage settings the functions run with (default: the local stage of infra/stage-config.ts). */
  readonly stage?: FunctionStage;
  readonly routes?: readonly Route[];
  /** Settings of functions outside the service's own (test-only routes). */
  readonly extraFunctions?: Readonly<Record<string, FunctionSettings>>;
  /** Variables set over every function's environment (tests: e.g. a small LIST_MAX_ORDERS). */
  readonly environment?: Readonly<Record<string, string>>;
  readonly documents?: Readonly<Record<string, () => string>>;
  /** Per-key limits by tier (default: the local stage's tiers, production's plus `unlimited`). */
  readonly limits?: LocalLimits;
  /** Host names answered besides the gateway's own (`ALLOWED_HOSTS`). */
  readonly allowedHosts?: readonly string[];
};

/** Settings a developer may override for the local run: how much the functions log and whether they print metrics. */
const developerOverrides = ['POWERTOOLS_LOG_LEVEL', 'POWERTOOLS_METRICS_DISABLED'];

/**
 * The deployed service on this machine: the handler modules Lambda runs, with the settings
 * and environment the stack gives them (infra/function-settings.ts), behind the local gateway.
 */
export const startLocalApi = async (options: LocalApiOptions): Promise<Gateway> => {
  const stage = options.stage ?? localStage;
  // The rule the deployed stages are built under holds here too: no key can take every list slot.
  const slotProblems = listSlotProblems(stage);
  if (slotProblems.length > 0) throw new Error(`the local stage's list slots: ${slotProblems.join('; ')}`);
  const routes = options.routes ?? defaultRoutes;
  const settingsOf = (name: string): FunctionSettings => {
    const settings = (functionSettings as Record<string, FunctionSettings>)[name] ?? options.extraFunctions?.[name];
    if (settings === undefined) throw new Error(`no function settings for ${name}`);
    return settings;
  };

  // Every function's environment, as the stack sets it. The handlers share this process, so
  // they share one environment: the functions' variables must agree where they overlap.
  const tables = { orders: options.ordersTable, apiKeys: options.apiKeysTable, listLeases: options.listLeasesTable };
  const credentials = options.dynamoDbCredentials;
  const client = createDocumentClient({ endpoint: options.dynamoDbEndpoint, credentials });
  await ensureTable(client, options.listLeasesTable, listLeasesTableKey).finally(() => client.destroy());
  const names = ['authorizer', ...routes.map((route) => route.operation)];
  const environment: Record<string, string> = {
    DYNAMODB_ENDPOINT: options.dynamoDbEndpoint,
    ...(credentials === undefined ? {} : credentialsEnvironment(credentials)),
  };
  for (const name of names.filter((name) => name in functionSettings)) {
    for (const [key, value] of Object.entries(functionEnvironment(name as FunctionName, stage, tables))) {
      if (environment[key] !== undefined && environment[key] !== value) throw new Error(`functions disagree on ${key}`);
      environment[key] = value;
    }
  }
  // No Secrets Manager here: the v2 list's cursor key is made for this run (its cursors end with it), unless one is set.
  environment.CURSOR_SECRETS = process.env.CURSOR_SECRETS ?? JSON.stringify({ current: randomBytes(32).toString('base64url') });
  for (const key of developerOverrides) if (process.env[key] !== undefined) delete environment[key];
  // Set in this process after it started: /proc/<pid>/environ still shows only what it began with.
  Object.assign(process.env, environment, options.environment);

  // A fresh module instance per local API (as each Lambda has its own), loaded up front like a
  // Lambda's init phase, so each instance keeps the configuration it was started with.
  const instance = ++instances;
  installLambdaStreamingGlobals(); // before the streaming handler module is evaluated
  // The gateway runs many invocations in this process: each gets its own context (its log keys,
  // its request id, its DynamoDB calls), as on Lambda, where each environment serves one at a time.
  runInvocationsConcurrently(clientBounds.maxConnections);
  const load = async <Handler>(name: string) => {
    const settings = settingsOf(name);
    const module = await import(`${pathToFileURL(resolve(repoRoot, settings.handlerFile)).href}?instance=${instance}`);
    return {
      name,
      handler: module.handler as Handler,
      memorySize: settings.memorySize,
      timeoutSeconds: settings.timeoutSeconds,
      // As Lambda's reserved concurrency caps the deployed function: the local gateway refuses beyond it.
      ...(settings.reservedConcurrency === undefined ? {} : { reservedConcurrency: settings.reservedConcurrency(stage) }),
    };
  };
  const authorizer = await load<Authorizer>('authorizer');
  const functions = new Map(await Promise.all(routes.map(async (route) => [route, await load<LambdaHandler>(route.operation)] as const)));
  return startGateway({
    port: options.port,
    routes,
    functions,
    authorizer,
    authorizerCacheTtlSeconds: stage.authorizerCacheTtlSeconds,
    rateLimiter: createRateLimiter(options.limits ?? localStage),
    ...(options.documents === undefined ? {} : { documents: options.documents }),
    ...(options.allowedHosts === undefined ? {} : { allowedHosts: options.allowedHosts }),
  });
};
