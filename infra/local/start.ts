/**
 * `npm start`: the whole service on this machine. DynamoDB Local (or DYNAMODB_ENDPOINT),
 * tables, demo orders or SEED_FILE, a local API key, and the local gateway in front of the
 * real handlers. The environment contract is documented in docs/developing.md#configuration.
 */
import './service-name.ts'; // first: the shared modules' logger is made when they are imported
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { z } from 'zod';
import { bearerTokenPattern, findActiveKey, shortestKey } from '../../functions/authorizer/api-keys.ts';
import { createApiKey, generateUsageKey, moveApiKey } from '../ops/key-store.ts';
import { functionEnvSchema, integerSetting, tableName } from '../../shared/config.ts';
import { createDocumentClient, type DocumentClient, type TableRef } from '../../shared/dynamo.ts';
import type { Order } from '../../shared/schemas.ts';
import { localStage } from '../stage-config.ts';
import type { LocalTierName } from '../tiers.ts';
import { type DynamoDbCredentials, type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local.ts';
import { allowedHostPattern } from './gateway-hosts.ts';
import { drainMs, type Gateway } from './gateway.ts';
import { startLocalApi } from './local-api.ts';
import { settleEarlierRuns } from './earlier-runs.ts';
import { localStateFile, removeLocalState, writeLocalState } from './local-state.ts';
import { callerPath, checkEnvFile, portInUseMessage, prepareDataDir, reservePort } from './start-checks.ts';
import { demoOrders, putOrders, readSeedFile } from './seed.ts';
import { apiKeysTableKey, ensureStatusIndex, ensureTable, ordersTableKey } from './local-tables.ts';

export const localEnvSchema = z.object({
  PORT: z
    .string()
    .regex(/^\d{1,5}$/, 'must be a port number (0-65535; 0 picks a free port)')
    .transform(Number)
    .pipe(z.number().max(65535, 'must be a port number (0-65535; 0 picks a free port)'))
    .default(3000),
  STORE_API_KEY: z
    .string()
    .min(shortestKey, `must be at least ${shortestKey} characters`)
    .regex(bearerTokenPattern, 'may only hold A-Z a-z 0-9 - . _ ~ + / (and trailing =)')
    .optional(),
  // The developer's own key is unlimited, so `npm run load` and `npm run bench` measure the service, not a throttle.
  STORE_API_KEY_TIER: z
    .enum(Object.keys(localStage.tiers) as [LocalTierName, ...LocalTierName[]], {
      error: `must be one of ${Object.keys(localStage.tiers).join(', ')}`,
    })
    .default(localStage.developerKeyTier),
  SEED_FILE: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).optional(),
  DYNAMODB_ENDPOINT: z.url({ error: 'must be a URL such as http://127.0.0.1:8000' }).optional(),
  ORDERS_TABLE: z._default(tableName, localStage.ordersTableName),
  API_KEYS_TABLE: z._default(tableName, localStage.apiKeysTableName),
  LIST_LEASES_TABLE: z._default(tableName, localStage.listLeasesTableName),
  // Read by local-state.ts; listed here so the environment contract is in one place.
  LOCAL_STATE_FILE: z.string().min(1).optional(),
  // Host names the gateway answers for besides its own (a proxy's or a tunnel's): comma-separated, `.name` for subdomains too.
  ALLOWED_HOSTS: z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((entry) => entry.trim().toLowerCase())
        .filter((entry) => entry !== ''),
    )
    .pipe(z.array(z.string().regex(allowedHostPattern, 'must be host names separated by commas (e.g. orders.test,.tunnel.example)')))
    .default([]),
  // API Gateway's own bounds for an authorizer's result TTL.
  AUTHORIZER_CACHE_TTL_SECONDS: z._default(integerSetting(0, 3600), localStage.authorizerCacheTtlSeconds),
  // The list function's settings (the local stage's segments unless set); checked here so a
  // bad value stops the start before anything runs, not when the function is loaded.
  SCAN_SEGMENTS: z._default(functionEnvSchema.shape.SCAN_SEGMENTS.def.innerType, localStage.scanSegments),
  SCAN_PAGE_SIZE: functionEnvSchema.shape.SCAN_PAGE_SIZE,
  // How long a list may wait for a client that takes nothing before it is cut (docs/operating.md#reliability).
  LIST_STALL_SECONDS: z._default(functionEnvSchema.shape.LIST_STALL_SECONDS, localStage.listStallSeconds),
});
type LocalEnv = z.infer<typeof localEnvSchema>;

/**
 * Empty variables count as unset, as a shell user would expect of `PORT= npm start`: removed
 * from the environment, so the handler modules the gateway loads read them as unset too.
 */
const unsetEmptyVariables = () => {
  for (const [name, value] of Object.entries(process.env)) if (value === '') delete process.env[name];
  return process.env;
};

/** A run that cannot record itself still serves; only the key tool's automatic target is lost. */
const recordLocalState = (...args: Parameters<typeof writeLocalState>) => {
  try {
    writeLocalState(...args);
  } catch (error) {
    console.warn(`Could not write ${args[1]} (${(error as Error).message}): \`npm run keys\` will need --endpoint and --table`);
  }
};

/**
 * The developer's key: STORE_API_KEY (registered if new, in STORE_API_KEY_TIER), or one generated
 * and printed for this run. A key registered before keeps its tier (`npm run keys -- move`
 * changes it); one kept in DATA_DIR from before usage identifiers gets one now, or the gateway
 * would refuse it.
 */
const registerDeveloperKey = async (apiKeys: TableRef, env: LocalEnv) => {
  const tier = env.STORE_API_KEY_TIER;
  if (env.STORE_API_KEY === undefined) {
    const { key } = await createApiKey(apiKeys, { name: 'local (generated)', prefix: localStage.keyPrefix, tier });
    console.log(`API key (generated for this run): ${key}\nIts limit tier: ${tier} (STORE_API_KEY_TIER)`);
    return;
  }
  const key = env.STORE_API_KEY;
  const found = await findActiveKey(apiKeys, key);
  if (found !== undefined) {
    if (found.usageKey === undefined) await moveApiKey(apiKeys, found, { tier: found.tier ?? tier, usageKey: generateUsageKey() });
    return;
  }
  // Not active but perhaps registered: it was revoked with `npm run keys` (kept in DATA_DIR).
  await createApiKey(apiKeys, { name: 'local (STORE_API_KEY)', prefix: '', key, tier }).catch((error: unknown) => {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    throw new Error(`STORE_API_KEY was revoked in table ${env.API_KEYS_TABLE}; choose another key`, { cause: error });
  });
};

/** DynamoDB Local on the local stage's port, in memory or with its data in `dataDir`. */
const startDatabase = async (dataDir: string | undefined): Promise<DynamoDbLocal> => {
  const dynamoDb = await startDynamoDbLocal({ port: localStage.dynamoDbPort, ...(dataDir === undefined ? {} : { dataDir }) });
  console.log(`DynamoDB Local on ${dynamoDb.endpoint} (${dataDir === undefined ? 'in memory' : `data in ${dataDir}`})`);
  return dynamoDb;
};

/** Creates missing tables, seeds the orders table only when this start created it, and registers the developer's key. */
const prepareTables = async (client: DocumentClient, env: LocalEnv, seed: readonly Order[]) => {
  await ensureTable(client, env.API_KEYS_TABLE, apiKeysTableKey);
  // Seed only a table this start created: a restart never duplicates or overwrites data.
  if (await ensureTable(client, env.ORDERS_TABLE, ordersTableKey)) {
    await putOrders({ client, tableName: env.ORDERS_TABLE }, seed);
    console.log(
      `Created table ${env.ORDERS_TABLE} with ${seed.length} ${env.SEED_FILE === undefined ? 'demo orders' : `orders from ${env.SEED_FILE}`}`,
    );
  } else {
    console.log(`Using existing table ${env.ORDERS_TABLE} (not seeded)`);
    await ensureStatusIndex(client, env.ORDERS_TABLE);
  }
  await registerDeveloperKey({ client, tableName: env.API_KEYS_TABLE }, env);
};

/** The environment, checked: a bad value stops the start with a message naming the variable. */
const readEnvironment = (): LocalEnv => {
  const parsed = localEnvSchema.safeParse(unsetEmptyVariables());
  if (!parsed.success) {
    throw new Error(`Invalid configuration: ${parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; ')}`);
  }
  return parsed.data;
};

/** What this start runs, and how it stops, on a signal or a failure. */
type Service = {
  dynamoDb?: DynamoDbLocal;
  gateway?: Gateway;
  readonly stateFile: string;
  readonly stop: (exitCode: number) => Promise<void>;
};

const stoppableService = (): Service => {
  let stopping = false;
  const service: Service = {
    stateFile: localStateFile(),
    /**
     * Requests in flight get up to drainMs to finish (a list still streaming then is cut), then
     * DynamoDB Local stops. Later signals change nothing: with Ctrl-C under npm, the service gets
     * SIGINT twice (from the terminal and forwarded by npm).
     */
    stop: async (exitCode: number) => {
      if (stopping) return;
      stopping = true;
      removeLocalState(service.stateFile);
      if (service.gateway !== undefined) console.log(`Stopping: requests in flight have up to ${drainMs / 1000} s to finish`);
      await service.gateway?.close({ drainMs }).catch(() => undefined);
      await service.dynamoDb?.stop();
      // Writes to a pipe are asynchronous: without this, the last log and metric lines can be lost.
      await Promise.all([process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write('', resolve))));
      process.exit(exitCode);
    },
  };
  // SIGTERM: kill, process managers, CI, and npm, which forwards it (package.json runs this with
  // `exec`, so no shell stands between). SIGINT: Ctrl-C. SIGHUP: the terminal went away.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void service.stop(0));
  return service;
};

/** The gateway in front of the real handlers on `endpoint`'s tables, recorded for `npm run keys`. */
const startGateway = async (
  env: LocalEnv,
  endpoint: string,
  credentials: DynamoDbCredentials | undefined,
  stateFile: string,
): Promise<Gateway> => {
  const ttl = env.AUTHORIZER_CACHE_TTL_SECONDS;
  console.log(
    ttl === 0
      ? 'Authorizer cache off (AUTHORIZER_CACHE_TTL_SECONDS=0): a revoked key is refused at once'
      : `Authorizer cache ${ttl} s (AUTHORIZER_CACHE_TTL_SECONDS; 0 turns it off): a revoked key keeps working up to ${ttl} s`,
  );
  const gateway = await startLocalApi({
    port: env.PORT,
    dynamoDbEndpoint: endpoint,
    ...(credentials === undefined ? {} : { dynamoDbCredentials: credentials }),
    ordersTable: env.ORDERS_TABLE,
    apiKeysTable: env.API_KEYS_TABLE,
    listLeasesTable: env.LIST_LEASES_TABLE,
    // The local stage's function settings, with what the developer chose for this run.
    stage: { ...localStage, authorizerCacheTtlSeconds: ttl, scanSegments: env.SCAN_SEGMENTS, listStallSeconds: env.LIST_STALL_SECONDS },
    allowedHosts: env.ALLOWED_HOSTS,
    documents: { '/v1/openapi.json': (await import('../openapi/document.ts')).servedOpenApiJson },
  });
  // For `npm run keys` (and other local tools): which DynamoDB and tables this run uses.
  recordLocalState(
    {
      pid: process.pid,
      apiUrl: gateway.url,
      dynamoDbEndpoint: endpoint,
      ordersTable: env.ORDERS_TABLE,
      apiKeysTable: env.API_KEYS_TABLE,
      ...(credentials === undefined ? {} : { dynamoDbCredentials: credentials }),
      authorizerCacheTtlSeconds: ttl,
      startedAt: new Date().toISOString(),
    },
    stateFile,
  );
  return gateway;
};

const main = async () => {
  // Node has read .env already: before anything uses a setting from it, a secret there must be private.
  await checkEnvFile();
  const env = readEnvironment();
  // Check everything the user chose before starting anything, so a bad setting costs nothing to fix.
  const port = await reservePort(env.PORT);
  const seed: Order[] = env.SEED_FILE === undefined ? demoOrders : await readSeedFile(callerPath(env.SEED_FILE));
  const dataDir = env.DATA_DIR === undefined || env.DYNAMODB_ENDPOINT !== undefined ? undefined : await prepareDataDir(env.DATA_DIR);
  // A DynamoDB Local an earlier start left running (killed outright) is stopped; one that a running start uses, never shared.
  if (env.DYNAMODB_ENDPOINT === undefined) await settleEarlierRuns(dataDir);
  const service = stoppableService();
  try {
    service.dynamoDb = env.DYNAMODB_ENDPOINT === undefined ? await startDatabase(dataDir) : undefined;
    const endpoint = service.dynamoDb?.endpoint ?? env.DYNAMODB_ENDPOINT!;
    if (service.dynamoDb === undefined && env.DATA_DIR !== undefined)
      console.log(`DATA_DIR is ignored: the DynamoDB at ${endpoint} keeps its own data`);
    // The DynamoDB Local started here answers only its own credentials; one named by DYNAMODB_ENDPOINT is signed as the environment says.
    const credentials = service.dynamoDb?.credentials;
    await prepareTables(createDocumentClient({ endpoint, credentials }), env, seed);
    await port.release();
    service.gateway = await startGateway(env, endpoint, credentials, service.stateFile);
    console.log(`Store Orders API listening on ${service.gateway.url}`);
  } catch (error) {
    // Taken between the check above and now: the same message as the check's.
    const message = (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? portInUseMessage(env.PORT) : (error as Error).message;
    console.error(`npm start: ${error instanceof Error ? message : String(error)}`);
    await service.stop(1);
  }
};

// Run, unless imported (the tests read the environment contract).
if (import.meta.main) {
  try {
    await main();
  } catch (error) {
    console.error(`npm start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
