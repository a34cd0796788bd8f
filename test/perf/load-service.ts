/** The orders `npm run load` seeds, and the service it loads, started as npm start runs it. */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { key, repoRoot } from './load-settings.ts';

// ----------------------------------------------------------------------------------------
// The seeded orders and what the load may do to them
// ----------------------------------------------------------------------------------------

export type SeedOrder = { id: string; petId: string; quantity: number; status: string };
const statuses = ['shipped', 'cancelled', 'placed'];
/** Ids 1…n-1 and, last, int64 max (exact digits end to end). */
export const seedOrders = (count: number): SeedOrder[] =>
  Array.from({ length: count }, (_, i) => ({
    id: i === count - 1 ? '9223372036854775807' : String(i + 1),
    petId: String(1000 + i),
    quantity: 1 + (i % 5),
    status: i % 10 < 7 ? 'pending' : statuses[i % 3]!,
  }));

// ----------------------------------------------------------------------------------------
// The service, as npm start runs it, with a probe that reports its memory over IPC
// ----------------------------------------------------------------------------------------

export type Service = { child: ChildProcess; url: string; ordersTable: string; output: () => string };

export const startService = async (seedFile: string, dynamoDbEndpoint: string): Promise<Service> => {
  const suffix = randomUUID().slice(0, 8);
  const ordersTable = `load-orders-${suffix}`;
  const child = spawn(process.execPath, ['--expose-gc', '--import', './test/perf/memory-probe.ts', 'infra/local/start.ts'], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PORT: '0',
      DYNAMODB_ENDPOINT: dynamoDbEndpoint,
      STORE_API_KEY: key,
      SEED_FILE: seedFile,
      // Fresh tables, so that the seed is loaded even into a DynamoDB that is already running.
      ORDERS_TABLE: ordersTable,
      API_KEYS_TABLE: `load-api-keys-${suffix}`,
      // EMF metrics on (OrdersCancelled counts the transitions); logs only when something is wrong.
      POWERTOOLS_METRICS_DISABLED: 'false',
      POWERTOOLS_LOG_LEVEL: 'WARN',
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', () => {
      const match = /Store Orders API listening on (http:\/\/127\.0\.0\.1:\d+)\/v1\n/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening:\n${output}`)));
  });
  return { child, url, ordersTable, output: () => output };
};

export type Memory = { rss: number; heapUsed: number };
export const memoryOf = async (service: Service): Promise<Memory> => {
  const answer = once(service.child, 'message') as Promise<[Memory]>;
  service.child.send({ type: 'memory' });
  return (await answer)[0];
};
