/**
 * `npm run flood`: what clients with no key do to a freshly started local service (infra/local/start.ts,
 * as `npm start` runs it, at its default log level), measured against the figures it promises
 * (docs/developing.md, "Clients without a key"). Exits 1 when one is missed. Not part of `npm test`
 * (its times depend on the machine); test/http/made-up-keys.test.ts checks the same behaviour by counts.
 *
 * 1. A flood of made-up keys: FLOOD_CONNECTIONS keep-alive connections (default 64) sending random
 *    `so_local_…` keys as fast as they are answered, for FLOOD_SECONDS (default 20). Meanwhile a key is
 *    minted every 2 s and its first request timed: each must be answered (404 for its cancel of an order
 *    that does not exist) within 2 s. The service's log during the flood, per refused request: at most 512 bytes.
 * 2. A keyless crowd: 300 sockets from 300 loopback addresses, each sending its head a byte a second
 *    with no key (and reopened when closed), while a client holding a key sends 30 requests over 10
 *    keep-alive connections: at least 27 answered.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { credentialsEnvironment, startDynamoDbLocal } from '../../infra/local/dynamodb-local.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { localStage } from '../../infra/stage-config.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { cancelAbsentOrder, keylessCrowd, madeUpKey } from '../lib/keyless-clients.ts';

const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const floodSeconds = setting('FLOOD_SECONDS', 20);
const floodConnections = setting('FLOOD_CONNECTIONS', 64);
const crowdSize = 300;
const limits = { freshKeyMs: 2_000, bytesPerRefusal: 512, keyedAnswered: 27 };

const startService = async (dynamoDbEndpoint: string) => {
  const suffix = randomUUID().slice(0, 8);
  const tables = { ORDERS_TABLE: `flood-orders-${suffix}`, API_KEYS_TABLE: `flood-keys-${suffix}` };
  const child = spawn(process.execPath, ['infra/local/start.ts'], {
    cwd: new URL('../../', import.meta.url),
    env: {
      ...process.env,
      PORT: '0',
      DYNAMODB_ENDPOINT: dynamoDbEndpoint,
      STORE_API_KEY: `so_local_flood-${suffix}-0123456789`,
      ...tables,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let bytes = 0;
  let output = '';
  for (const stream of [child.stdout, child.stderr])
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (output.length < 100_000) output += chunk.toString();
    });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = /Store Orders API listening on (http:\/\/127\.0\.0\.1:\d+)\/v1\n/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening:\n${output}`)));
  });
  return {
    child,
    port: Number(new URL(url).port),
    apiKeysTable: tables.API_KEYS_TABLE,
    loggedBytes: () => bytes,
    key: `so_local_flood-${suffix}-0123456789`,
  };
};

type Service = Awaited<ReturnType<typeof startService>>;

const floodPhase = async (service: Service, dynamoDbEndpoint: string) => {
  const apiKeys = { client: createDocumentClient({ endpoint: dynamoDbEndpoint }), tableName: service.apiKeysTable };
  const agent = new Agent({ keepAlive: true, maxSockets: floodConnections });
  const statuses = new Map<number, number>();
  let stopped = false;
  // One cancel with the developer's key first: the fresh keys' times are the flood's, not the first
  // invocation of the cancel handler in a new process (cold starts are test/perf/cold-start.ts's).
  await cancelAbsentOrder(service.port, service.key);
  const loggedBefore = service.loggedBytes();
  const workers = Array.from({ length: floodConnections }, async () => {
    while (!stopped) {
      const { status } = await cancelAbsentOrder(service.port, madeUpKey(), agent);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  });
  const fresh: { status: number; ms: number }[] = [];
  const end = performance.now() + floodSeconds * 1000;
  await sleep(1_000);
  while (performance.now() < end) {
    const { key } = await createApiKey(apiKeys, { name: 'fresh', prefix: localStage.keyPrefix, tier: 'standard' });
    fresh.push(await cancelAbsentOrder(service.port, key));
    await sleep(2_000);
  }
  stopped = true;
  await Promise.all(workers);
  agent.destroy();
  apiKeys.client.destroy();
  // The log lines of the last answers.
  await sleep(500);
  const refused = (statuses.get(401) ?? 0) + (statuses.get(429) ?? 0);
  return { statuses, fresh, refused, bytesPerRefusal: (service.loggedBytes() - loggedBefore) / Math.max(1, refused) };
};

const crowdPhase = async (service: Service) => {
  const crowd = keylessCrowd(service.port, crowdSize);
  await sleep(2_000);
  const agent = new Agent({ keepAlive: true, maxSockets: 10 });
  const answers: number[] = [];
  for (let round = 0; round < 3; round++) {
    answers.push(
      ...(await Promise.all(Array.from({ length: 10 }, () => cancelAbsentOrder(service.port, service.key, agent)))).map(
        ({ status }) => status,
      ),
    );
    await sleep(1_000);
  }
  await crowd.stop();
  agent.destroy();
  return { answered: answers.filter((status) => status === 404).length, answers };
};

const dynamoDb = await startDynamoDbLocal();
Object.assign(process.env, credentialsEnvironment(dynamoDb.credentials));
const service = await startService(dynamoDb.endpoint);
try {
  const flood = await floodPhase(service, dynamoDb.endpoint);
  const crowd = await crowdPhase(service);
  const slowest = Math.max(...flood.fresh.map(({ ms }) => ms));
  const problems = [
    ...flood.fresh
      .filter(({ status, ms }) => status !== 404 || ms > limits.freshKeyMs)
      .map((answer) => `a fresh key's first request: ${JSON.stringify(answer)}`),
    ...(flood.bytesPerRefusal > limits.bytesPerRefusal ? [`${flood.bytesPerRefusal.toFixed(0)} bytes of log per refusal`] : []),
    ...([...flood.statuses.keys()].some((status) => status !== 401 && status !== 429)
      ? [`flood answers ${JSON.stringify([...flood.statuses])}`]
      : []),
    ...(crowd.answered < limits.keyedAnswered ? [`the keyed client answered ${crowd.answered} times in 30`] : []),
  ];
  console.log(
    [
      `flood: ${floodConnections} keep-alive connections of made-up keys for ${floodSeconds} s: ${[...flood.statuses].map(([status, count]) => `${count} × ${status}`).join(', ')}`,
      `  fresh keys, first request: ${flood.fresh.map(({ status, ms }) => `${status} in ${ms} ms`).join(', ')} (slowest ${slowest} ms; limit ${limits.freshKeyMs} ms)`,
      `  npm start's log: ${flood.bytesPerRefusal.toFixed(0)} bytes per refused request (limit ${limits.bytesPerRefusal})`,
      `crowd: ${crowdSize} keyless sockets from ${crowdSize} addresses: the keyed client answered ${crowd.answered} of 30 (limit ${limits.keyedAnswered})`,
      problems.length === 0 ? 'all figures met' : `MISSED: ${problems.join('; ')}`,
    ].join('\n'),
  );
  process.exitCode = problems.length === 0 ? 0 : 1;
} finally {
  service.child.kill('SIGTERM');
  await once(service.child, 'exit');
  await dynamoDb.stop();
}
