/**
 * `npm run load`: a mixed load of lists and cancels on loopback against a freshly started local
 * service (infra/local/start.ts, as `npm start` runs it) seeded with LOAD_ORDERS orders, then the
 * table is checked for lost or double transitions. Exits 1 on any 5xx, any unexpected status or
 * client error, any incomplete list, or any violation. Not part of `npm test` (its figures depend
 * on the machine); test/http/load-command.test.ts runs one very short round of it.
 *
 *   LOAD_SECONDS      total time under load, split across the rounds (default 15)
 *   LOAD_ROUNDS       rounds; the service's memory is read before the first and after each (default 3)
 *   LOAD_CONNECTIONS  concurrent connections: a quarter list (at most the local stage's list concurrency), the rest cancel (default 8)
 *   LOAD_ORDERS       orders seeded (default 20000): 70 % pending, the rest shipped, cancelled or placed
 *   LOAD_OVERLOAD_SECONDS      each half of the overload phase: cancels only, then the mix (default 20; 0 skips it)
 *   LOAD_OVERLOAD_CONNECTIONS  keep-alive clients of the overload phase (default 50)
 *   LOAD_OVERLOAD_LIST_SHARE   share of the mix's requests that are lists (default 0.1)
 *   LOAD_CHECK_FAIRNESS        1 (default): fail when mixed cancels fall below half their cancel-only
 *                              rate or a refused list waited 1 s or more; 0: report only
 *   DYNAMODB_ENDPOINT use this DynamoDB (fresh, uniquely named tables) instead of starting DynamoDB Local
 *
 * The script starts DynamoDB Local itself and gives it to the service (DYNAMODB_ENDPOINT), so that
 * it can stop the service first — which finishes the requests in flight, those the load client
 * abandoned at the end of a round included — and then read the table and the service's metrics
 * complete.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { credentialsEnvironment, type DynamoDbLocal, startDynamoDbLocal } from '../../infra/local/dynamodb-local.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { type Cancel204, reportOverload, runOverload, runRound, runRounds } from './load-runs.ts';
import { memoryOf, type SeedOrder, type Service, seedOrders, startService } from './load-service.ts';
import { cancelConnections, listConnections, mb, roundSeconds, settings } from './load-settings.ts';

// ----------------------------------------------------------------------------------------
// The table afterwards: every transition happened once, none was lost
// ----------------------------------------------------------------------------------------

type StoredOrder = { id: { value: string }; status?: string; cancelledAt?: string };

const checkTable = async (
  dynamoDbEndpoint: string,
  service: Service,
  orders: readonly SeedOrder[],
  cancels204: readonly Cancel204[],
  startedAt: number,
): Promise<{ transitions: number; unanswered: number; problems: string[] }> => {
  const client = createDocumentClient({ endpoint: dynamoDbEndpoint });
  const stored = new Map<string, StoredOrder>();
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: service.ordersTable, ExclusiveStartKey: startKey }));
    for (const item of (page.Items ?? []) as StoredOrder[]) stored.set(item.id.value, item);
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  client.destroy();

  const first204 = new Map<string, number>();
  for (const { id, at } of cancels204) first204.set(id, Math.min(at, first204.get(id) ?? Infinity));
  const problems: string[] = [];
  let transitions = 0;
  let unanswered = 0;
  for (const order of orders) {
    const now = stored.get(order.id);
    if (now === undefined) {
      problems.push(`order ${order.id} is gone`);
      continue;
    }
    const acknowledged = first204.get(order.id);
    if (order.status !== 'pending') {
      // Only pending orders may change; a 204 on an already cancelled one changes nothing.
      if (now.status !== order.status || now.cancelledAt !== undefined)
        problems.push(`order ${order.id} was ${order.status} and is now ${now.status}`);
      continue;
    }
    if (now.status === 'pending') {
      if (acknowledged !== undefined) problems.push(`order ${order.id}: cancel answered 204 but the order is still pending (lost)`);
      continue;
    }
    transitions += 1;
    const cancelledAt = Date.parse(now.cancelledAt ?? '');
    if (now.status !== 'cancelled' || Number.isNaN(cancelledAt))
      problems.push(`order ${order.id} is ${now.status}, cancelledAt ${now.cancelledAt}`);
    // Its request was in flight when the load client stopped at the end of a round, and the service finished it.
    else if (acknowledged === undefined) unanswered += 1;
    // cancelledAt is written by the one transition: before the first 204 reached the client, never
    // moved by a later cancel (which would write a later time).
    else if (cancelledAt < startedAt - 1_000 || cancelledAt > acknowledged)
      problems.push(`order ${order.id}: cancelledAt ${now.cancelledAt} was set after its first 204 (set twice?)`);
  }
  // At most one request per cancelling connection is in flight when a round ends; the warm-up's one connection and the overload's two phases included.
  if (unanswered > cancelConnections * settings.rounds + 1 + (settings.overloadSeconds > 0 ? 2 * settings.overloadConnections : 0))
    problems.push(`${unanswered} orders were cancelled without a 204 reaching the client`);
  return { transitions, unanswered, problems };
};

/** OrdersCancelled in the service's EMF output: one per transition the service made. */
const countedTransitions = (output: string): number =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"OrdersCancelled"'))
    .flatMap((line) => [(JSON.parse(line) as { OrdersCancelled: number | number[] }).OrdersCancelled].flat())
    .reduce((sum, value) => sum + value, 0);

// ----------------------------------------------------------------------------------------

/**
 * DYNAMODB_ENDPOINT, or a DynamoDB Local of the run's own: it answers only its own credentials,
 * which this program and the service (a child, inheriting them) sign with.
 */
const dynamoDbOfTheRun = async (): Promise<{ endpoint: string; dynamoDb?: DynamoDbLocal }> => {
  if (process.env.DYNAMODB_ENDPOINT) return { endpoint: process.env.DYNAMODB_ENDPOINT };
  const dynamoDb = await startDynamoDbLocal();
  Object.assign(process.env, credentialsEnvironment(dynamoDb.credentials));
  return { endpoint: dynamoDb.endpoint, dynamoDb };
};

const main = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'store-orders-load-'));
  const orders = seedOrders(settings.orders);
  const seedFile = join(dir, 'orders.json');
  await writeFile(
    seedFile,
    `[${orders.map((o) => `{"id":${o.id},"petId":${o.petId},"quantity":${o.quantity},"status":"${o.status}"}`).join(',')}]`,
  );
  console.log(
    `Load: ${settings.rounds} round(s) of ${roundSeconds} s, ${listConnections} connection(s) listing and ${cancelConnections} cancelling, ${orders.length} orders`,
  );
  const { endpoint: dynamoDbEndpoint, dynamoDb } = await dynamoDbOfTheRun();
  const service = await startService(seedFile, dynamoDbEndpoint);
  const problems: string[] = [];
  const cancels204: Cancel204[] = [];
  const rows: string[][] = [];
  let failed = false;
  try {
    const before = await memoryOf(service);
    console.log(`service memory before: rss ${mb(before.rss)}, heap ${mb(before.heapUsed)}`);
    const startedAt = Date.now();
    // A short, light warm-up (not reported, but checked like the rounds): DynamoDB Local's JIT is cold.
    await runRound(service, orders, problems, cancels204, { listConnections: 1, cancelConnections: 1, seconds: Math.min(2, roundSeconds) });
    rows.push(...(await runRounds(service, orders, problems, cancels204)));
    const overload = settings.overloadSeconds > 0 ? await runOverload(service, orders, problems, cancels204) : undefined;
    // Stopping the service finishes what is still in flight and flushes its metrics.
    service.child.kill('SIGTERM');
    const [exitCode] = (await once(service.child, 'exit')) as [number | null];
    if (exitCode !== 0) problems.push(`the service exited with ${exitCode} on SIGTERM`);
    const table = await checkTable(dynamoDbEndpoint, service, orders, cancels204, startedAt);
    problems.push(...table.problems);
    // The service counts a transition when its UpdateItem reports one. When an attempt's answer is
    // lost (it timed out) after DynamoDB applied it, the retry finds the order already cancelled: a
    // transition not counted. A transition counted twice, though, would be a double transition.
    const counted = countedTransitions(service.output());
    if (counted > table.transitions)
      problems.push(`the service counted ${counted} transitions (OrdersCancelled), the table shows only ${table.transitions}`);
    if (overload !== undefined) reportOverload(overload, problems);
    const header = ['round', 'route', 'requests', 'req/s', 'p50', 'p99', 'statuses', 'errors', 'service rss', 'service heap'];
    console.log(`\n${[header, ...rows].map((row) => row.join(' | ')).join('\n')}\n`);
    const uncounted = table.transitions - counted;
    console.log(
      `transitions pending → cancelled: ${table.transitions}, each once; counted by the service (OrdersCancelled): ${counted}` +
        (uncounted > 0 ? ` (${uncounted} whose first attempt timed out after DynamoDB applied it)` : '') +
        `; ${table.unanswered} for requests the load client abandoned at the end of a round; 204 answers: ${cancels204.length}`,
    );
  } catch (error) {
    failed = true;
    console.error(error);
  } finally {
    if (service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGTERM');
      await once(service.child, 'exit');
    }
    await dynamoDb?.stop();
    await rm(dir, { recursive: true, force: true });
  }
  if (problems.length > 0) console.error(`\nFAILED: ${problems.length} problem(s)\n- ${[...new Set(problems)].slice(0, 20).join('\n- ')}`);
  else if (!failed)
    console.log(
      'OK: no 5xx (lists refused at the list concurrency aside), no unexpected status, every list whole, no lost or double transition',
    );
  process.exitCode = failed || problems.length > 0 ? 1 : 0;
};

await main();
