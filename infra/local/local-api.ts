import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createDocumentClient, type LocalCredentials } from '../../shared/dynamo.ts';
import type { FunctionContract } from '../function-contract.ts';
import { functionEnvironment } from '../function-settings.ts';
import { functionsOf, type Registry, registry as serviceRegistry } from '../registry.ts';
import { type FunctionStage, localStage } from '../stage-config.ts';
import { listSlotProblems, type Throttling } from '../tiers.ts';
import { authorizationPatternFor } from '../../functions/authorizer/api-keys.ts';
import { type Gateway, startGateway } from './gateway.ts';
import { credentialsEnvironment } from './dynamodb-local.ts';
import { clientBounds } from './gateway-server.ts';
import { type Authorizer, installLambdaStreamingGlobals, type LambdaHandler, runInvocationsConcurrently } from './lambda-runtime.ts';
import { createRateLimiter, type LocalLimits } from './rate-limits.ts';
import { ensureTable, listLeasesTableKey } from './local-tables.ts';

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
  /** The functions to run (default: the service's, infra/registry.ts); tests add an operation of their own or take one away. */
  readonly registry?: Registry;
  /** Variables set over every function's environment (tests: e.g. a small LIST_MAX_ORDERS). */
  readonly environment?: Readonly<Record<string, string>>;
  readonly documents?: Readonly<Record<string, () => string>>;
  /** Per-key limits by tier (default: the local stage's tiers, production's plus `unlimited`). */
  readonly limits?: LocalLimits;
  /** Host names answered besides the gateway's own (`ALLOWED_HOSTS`). */
  readonly allowedHosts?: readonly string[];
  /** Authorizations of keys not cached per client address, the stand-in for the stage's firewall (default: the local stage's). */
  readonly authorizationsPerAddress?: Throttling;
};

/** Settings a developer may override for the local run: how much the functions log and whether they print metrics. */
const developerOverrides = ['POWERTOOLS_LOG_LEVEL', 'POWERTOOLS_METRICS_DISABLED'];

/**
 * The deployed service on this machine: the handler modules Lambda runs, with the settings
 * and environment the stack gives them (their contracts, infra/function-settings.ts), behind the local gateway.
 */
export const startLocalApi = async (options: LocalApiOptions): Promise<Gateway> => {
  const stage = options.stage ?? localStage;
  // The rule the deployed stages are built under holds here too: no key can take every list slot.
  const slotProblems = listSlotProblems(stage);
  if (slotProblems.length > 0) throw new Error(`the local stage's list slots: ${slotProblems.join('; ')}`);
  const registry = options.registry ?? serviceRegistry;
  const routes = registry.operations.map(({ route }) => route);

  // Every function's environment, as the stack sets it. The handlers share this process, so
  // they share one environment: the functions' variables must agree where they overlap.
  const tables = { orders: options.ordersTable, apiKeys: options.apiKeysTable, listLeases: options.listLeasesTable };
  const credentials = options.dynamoDbCredentials;
  const client = createDocumentClient({ endpoint: options.dynamoDbEndpoint, credentials });
  await ensureTable(client, options.listLeasesTable, listLeasesTableKey).finally(() => client.destroy());
  const environment: Record<string, string> = {
    DYNAMODB_ENDPOINT: options.dynamoDbEndpoint,
    ...(credentials === undefined ? {} : credentialsEnvironment(credentials)),
  };
  for (const { function: settings } of functionsOf(registry)) {
    for (const [key, value] of Object.entries(functionEnvironment(settings, stage, tables))) {
      if (environment[key] !== undefined && environment[key] !== value) throw new Error(`functions disagree on ${key}`);
      environment[key] = value;
    }
  }
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
  const load = async <Handler>({ name, function: settings }: FunctionContract) => {
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
  const authorizer = await load<Authorizer>(registry.authorizer);
  const functions = new Map(
    await Promise.all(registry.operations.map(async (contract) => [contract.route, await load<LambdaHandler>(contract)] as const)),
  );
  return startGateway({
    port: options.port,
    routes,
    functions,
    authorizer,
    authorizerCacheTtlSeconds: stage.authorizerCacheTtlSeconds,
    // What API Gateway lets through to the authorizer, and the stage's firewall, as deployed.
    authorizationPattern: authorizationPatternFor(stage),
    authorizationsPerAddress: options.authorizationsPerAddress ?? localStage.authorizationsPerAddress,
    rateLimiter: createRateLimiter(
      options.limits ?? localStage,
      new Map(registry.operations.map(({ name, throttling }) => [name, throttling])),
    ),
    ...(options.documents === undefined ? {} : { documents: options.documents }),
    ...(options.allowedHosts === undefined ? {} : { allowedHosts: options.allowedHosts }),
  });
};
