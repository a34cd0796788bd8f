/**
 * `npm start`: the whole service on this machine. DynamoDB Local (or DYNAMODB_ENDPOINT),
 * tables, demo orders or SEED_FILE, a local API key, and the local gateway in front of the
 * real handlers. The environment contract is documented in README.md ("Local run").
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { z } from 'zod';
import { bearerTokenPattern, createApiKey, findActiveKey } from '../../shared/api-keys.ts';
import { tableName } from '../../shared/config.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import type { Order } from '../../shared/schemas.ts';
import { localStage } from '../stage-config.ts';
import { type DynamoDbLocal, startDynamoDbLocal } from './dynamodb-local.ts';
import { drainMs, type Gateway } from './gateway.ts';
import { startLocalApi } from './local-api.ts';
import { demoOrders, putOrders, readSeedFile } from './seed.ts';
import { apiKeysTableKey, ensureTable, ordersTableKey } from './tables.ts';

export const localEnvSchema = z.object({
  PORT: z
    .string()
    .regex(/^\d{1,5}$/, 'must be a port number (0-65535; 0 picks a free port)')
    .transform(Number)
    .pipe(z.number().max(65535, 'must be a port number (0-65535; 0 picks a free port)'))
    .default(3000),
  STORE_API_KEY: z
    .string()
    .min(16, 'must be at least 16 characters')
    .regex(bearerTokenPattern, 'may only hold A-Z a-z 0-9 - . _ ~ + / (and trailing =)')
    .optional(),
  SEED_FILE: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).optional(),
  DYNAMODB_ENDPOINT: z.url({ error: 'must be a URL such as http://127.0.0.1:8000' }).optional(),
  ORDERS_TABLE: tableName.default(localStage.ordersTableName),
  API_KEYS_TABLE: tableName.default(localStage.apiKeysTableName),
});

/** Empty variables count as unset, as a shell user would expect of `PORT= npm start`. */
const environment = () => Object.fromEntries(Object.entries(process.env).filter(([, value]) => value !== ''));

const main = async () => {
  const parsed = localEnvSchema.safeParse(environment());
  if (!parsed.success) {
    throw new Error(`Invalid configuration: ${parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; ')}`);
  }
  const env = parsed.data;
  // Read the seed before starting anything, so a bad file costs nothing to fix.
  const seed: Order[] = env.SEED_FILE === undefined ? demoOrders : await readSeedFile(env.SEED_FILE);

  let dynamoDb: DynamoDbLocal | undefined;
  let gateway: Gateway | undefined;
  let stopping = false;
  /**
   * Requests in flight get up to drainMs to finish (a list still streaming then is cut), then
   * DynamoDB Local stops. Later signals change nothing: with Ctrl-C under npm, the service gets
   * SIGINT twice (from the terminal and forwarded by npm).
   */
  const stop = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    if (gateway !== undefined) console.log(`Stopping: requests in flight have up to ${drainMs / 1000} s to finish`);
    await gateway?.close({ drainMs }).catch(() => undefined);
    await dynamoDb?.stop();
    // Writes to a pipe are asynchronous: without this, the last log and metric lines can be lost.
    await Promise.all([process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write('', resolve))));
    process.exit(exitCode);
  };
  // SIGTERM: kill, process managers, CI, and npm, which forwards it (package.json runs this with
  // `exec`, so no shell stands between). SIGINT: Ctrl-C. SIGHUP: the terminal went away.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(0));

  try {
    let endpoint = env.DYNAMODB_ENDPOINT;
    if (endpoint === undefined) {
      dynamoDb = await startDynamoDbLocal({
        port: localStage.dynamoDbPort,
        ...(env.DATA_DIR === undefined ? {} : { dataDir: env.DATA_DIR }),
      });
      endpoint = dynamoDb.endpoint;
      console.log(`DynamoDB Local on ${endpoint} (${env.DATA_DIR === undefined ? 'in memory' : `data in ${env.DATA_DIR}`})`);
    }
    const client = createDocumentClient({ endpoint });
    const orders = { client, tableName: env.ORDERS_TABLE };
    const apiKeys = { client, tableName: env.API_KEYS_TABLE };
    await ensureTable(client, env.API_KEYS_TABLE, apiKeysTableKey);
    // Seed only a table this start created: a restart never duplicates or overwrites data.
    if (await ensureTable(client, env.ORDERS_TABLE, ordersTableKey)) {
      await putOrders(orders, seed);
      console.log(
        `Created table ${env.ORDERS_TABLE} with ${seed.length} ${env.SEED_FILE === undefined ? 'demo orders' : `orders from ${env.SEED_FILE}`}`,
      );
    } else {
      console.log(`Using existing table ${env.ORDERS_TABLE} (not seeded)`);
    }

    const key = env.STORE_API_KEY ?? (await createApiKey(apiKeys, { name: 'local (generated)', prefix: localStage.keyPrefix })).key;
    if (env.STORE_API_KEY === undefined) console.log(`API key (generated for this run): ${key}`);
    else if ((await findActiveKey(apiKeys, key)) === undefined) {
      // Registered already but not active: it was revoked with `npm run keys` (kept in DATA_DIR).
      await createApiKey(apiKeys, { name: 'local (STORE_API_KEY)', prefix: '', key }).catch((error: unknown) => {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        throw new Error(`STORE_API_KEY was revoked in table ${env.API_KEYS_TABLE}; choose another key`, { cause: error });
      });
    }

    gateway = await startLocalApi({
      port: env.PORT,
      dynamoDbEndpoint: endpoint,
      ordersTable: env.ORDERS_TABLE,
      apiKeysTable: env.API_KEYS_TABLE,
      documents: { '/v1/openapi.json': (await import('../../shared/openapi.ts')).servedOpenApiJson },
    });
    console.log(`Store Orders API listening on ${gateway.url}`);
  } catch (error) {
    console.error(`npm start: ${error instanceof Error ? error.message : String(error)}`);
    await stop(1);
  }
};

try {
  await main();
} catch (error) {
  console.error(`npm start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
