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
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import autocannon from 'autocannon';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../infra/local/dynamodb-local.ts';
import { localStage } from '../../infra/stage-config.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';

const setting = (name: string, fallback: number, min: number): number => {
  const text = process.env[name];
  const value = text === undefined || text === '' ? fallback : Number(text);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number ≥ ${min}, got ${JSON.stringify(text)}`);
  return value;
};

const settings = {
  seconds: setting('LOAD_SECONDS', 15, 1),
  rounds: Math.trunc(setting('LOAD_ROUNDS', 3, 1)),
  connections: Math.trunc(setting('LOAD_CONNECTIONS', 8, 2)),
  orders: Math.trunc(setting('LOAD_ORDERS', 20_000, 10)),
  overloadSeconds: Math.trunc(setting('LOAD_OVERLOAD_SECONDS', 20, 0)),
  overloadConnections: Math.trunc(setting('LOAD_OVERLOAD_CONNECTIONS', 50, 2)),
  overloadListShare: setting('LOAD_OVERLOAD_LIST_SHARE', 0.1, 0),
  checkFairness: setting('LOAD_CHECK_FAIRNESS', 1, 0) !== 0,
};
// No more lists at once than the local stage runs: the rounds measure lists and cancels side by side, the overload the refusals.
const listConnections = Math.min(localStage.listReservedConcurrency, Math.max(1, Math.round(settings.connections / 4)));
const cancelConnections = settings.connections - listConnections;
const roundSeconds = Math.max(1, Math.round(settings.seconds / settings.rounds));
const key = `so_local_load-${randomUUID()}`;
const repoRoot = new URL('../../', import.meta.url);

// ----------------------------------------------------------------------------------------
// The seeded orders and what the load may do to them
// ----------------------------------------------------------------------------------------

type SeedOrder = { id: string; petId: string; quantity: number; status: string };
const statuses = ['shipped', 'cancelled', 'placed'];
/** Ids 1…n-1 and, last, int64 max (exact digits end to end). */
const seedOrders = (count: number): SeedOrder[] =>
  Array.from({ length: count }, (_, i) => ({
    id: i === count - 1 ? '9223372036854775807' : String(i + 1),
    petId: String(1000 + i),
    quantity: 1 + (i % 5),
    status: i % 10 < 7 ? 'pending' : statuses[i % 3]!,
  }));

// ----------------------------------------------------------------------------------------
// The service, as npm start runs it, with a probe that reports its memory over IPC
// ----------------------------------------------------------------------------------------

type Service = { child: ChildProcess; url: string; ordersTable: string; output: () => string };

const startService = async (seedFile: string, dynamoDbEndpoint: string): Promise<Service> => {
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

type Memory = { rss: number; heapUsed: number };
const memoryOf = async (service: Service): Promise<Memory> => {
  const answer = once(service.child, 'message') as Promise<[Memory]>;
  service.child.send({ type: 'memory' });
  return (await answer)[0];
};

// ----------------------------------------------------------------------------------------
// One round: lists and cancels at once, each route its own autocannon instance
// ----------------------------------------------------------------------------------------

type Cancel204 = { id: string; at: number };
type RouteFigures = {
  route: string;
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  errors: number;
};

const figures = (route: string, result: autocannon.Result): RouteFigures => ({
  route,
  requests: result.requests.total,
  perSecond: result.requests.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([status, { count }]) => [status, count ?? 0])),
  errors: result.errors + result.timeouts,
});

const runRound = async (
  service: Service,
  orders: readonly SeedOrder[],
  problems: string[],
  cancels204: Cancel204[],
  shape = { listConnections, cancelConnections, seconds: roundSeconds },
) => {
  const headers = { authorization: `Bearer ${key}` };
  const cancelTargets = orders.map((order) => order.id);
  const list = autocannon({
    url: `${service.url}/v1/store/orders`,
    connections: shape.listConnections,
    duration: shape.seconds,
    headers,
    requests: [
      {
        method: 'GET',
        onResponse: (status, body) => {
          // Refused because the stage's lists are all running (as API Gateway answers the list function at its reserved concurrency).
          if (status === 503 && !body.includes('"code":"service_unavailable"'))
            problems.push(`a list answered 503 with ${body.slice(0, 100)}`);
          if (status !== 200) return;
          // Every order, every time, exactly: a list cut short must never pass for a whole one.
          const ids = body.match(/"id":-?\d+/g) ?? [];
          if (!body.endsWith(']') || ids.length !== orders.length) problems.push(`a list held ${ids.length} of ${orders.length} orders`);
        },
      },
    ],
  });
  const cancel = autocannon({
    url: service.url,
    connections: shape.cancelConnections,
    duration: shape.seconds,
    headers,
    requests: [
      {
        method: 'DELETE',
        setupRequest: (request, context) => {
          // Mostly seeded ids (repeats included: cancelling twice must change nothing), some unknown.
          const id =
            Math.random() < 0.05
              ? String(10_000_000 + Math.trunc(Math.random() * 1000))
              : cancelTargets[Math.trunc(Math.random() * cancelTargets.length)]!;
          (context as { id?: string }).id = id;
          return { ...request, path: `/v1/store/orders/${id}` };
        },
        onResponse: (status, _body, context) => {
          if (status === 204) cancels204.push({ id: (context as { id: string }).id, at: Date.now() });
        },
      },
    ],
  });
  const [listResult, cancelResult] = await Promise.all([list, cancel]);
  return [figures('GET /v1/store/orders', listResult), figures('DELETE /v1/store/orders/{orderId}', cancelResult)];
};

// ----------------------------------------------------------------------------------------
// Overload: the same clients sending only cancels, then 10 % lists among the cancels
// ----------------------------------------------------------------------------------------

type Kind = 'list' | 'cancel';
type KindFigures = { count: number; statuses: Record<string, number>; latencies: number[] };
type Overload = { cancelOnly: RouteFigures; mixed: Record<Kind, KindFigures>; refusedLatencies: number[]; seconds: number };

const percentile = (values: readonly number[], p: number) => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
};

const randomCancelPath = (orders: readonly SeedOrder[]) => {
  const id =
    Math.random() < 0.05 ? String(10_000_000 + Math.trunc(Math.random() * 1000)) : orders[Math.trunc(Math.random() * orders.length)]!.id;
  return { id, path: `/v1/store/orders/${id}` };
};

/**
 * The issue-20 scenario: `overloadConnections` keep-alive clients send only cancels, then the
 * same clients send lists (`overloadListShare` of their requests) among the cancels. Each request's
 * kind is drawn when it is sent; its latency is measured from then to its last byte.
 */
const runOverload = async (
  service: Service,
  orders: readonly SeedOrder[],
  problems: string[],
  cancels204: Cancel204[],
): Promise<Overload> => {
  const headers = { authorization: `Bearer ${key}` };
  const seconds = settings.overloadSeconds;
  const connections = settings.overloadConnections;
  const onCancel = (status: number, context: object) => {
    if (status === 204) cancels204.push({ id: (context as { id: string }).id, at: Date.now() });
  };
  const cancelOnly = await autocannon({
    url: service.url,
    connections,
    duration: seconds,
    headers,
    requests: [
      {
        method: 'DELETE',
        setupRequest: (request, context) => {
          const { id, path } = randomCancelPath(orders);
          (context as { id?: string }).id = id;
          return { ...request, path };
        },
        onResponse: (status, _body, context) => onCancel(status, context),
      },
    ],
  });
  const mixed: Record<Kind, KindFigures> = {
    list: { count: 0, statuses: {}, latencies: [] },
    cancel: { count: 0, statuses: {}, latencies: [] },
  };
  const refusedLatencies: number[] = [];
  type Sent = { id?: string; kind?: Kind; sentAt?: number };
  await autocannon({
    url: service.url,
    connections,
    duration: seconds,
    headers,
    requests: [
      {
        setupRequest: (request, context) => {
          const sent = context as Sent;
          sent.sentAt = performance.now();
          if (Math.random() < settings.overloadListShare) {
            sent.kind = 'list';
            return { ...request, method: 'GET', path: '/v1/store/orders' };
          }
          const { id, path } = randomCancelPath(orders);
          Object.assign(sent, { kind: 'cancel', id });
          return { ...request, method: 'DELETE', path };
        },
        onResponse: (status, body, context) => {
          const sent = context as Sent;
          const figures = mixed[sent.kind!];
          figures.count += 1;
          figures.statuses[status] = (figures.statuses[status] ?? 0) + 1;
          const latency = performance.now() - sent.sentAt!;
          if (sent.kind === 'cancel' || status === 200) figures.latencies.push(latency);
          else refusedLatencies.push(latency);
          if (sent.kind === 'cancel') return onCancel(status, context);
          if (status === 200) {
            const ids = body.match(/"id":-?\d+/g) ?? [];
            if (!body.endsWith(']') || ids.length !== orders.length) problems.push(`a list held ${ids.length} of ${orders.length} orders`);
          } else if (status === 503 || status === 429) {
            // Refused: the stage's list concurrency (503, as API Gateway answers a throttled function) or the key's (429).
            const expected = status === 503 ? 'service_unavailable' : 'too_many_requests';
            if (!body.includes(`"code":"${expected}"`)) problems.push(`a refused list answered ${status} with ${body.slice(0, 100)}`);
          } else problems.push(`a list answered ${status}`);
        },
      },
    ],
  });
  return { cancelOnly: figures('DELETE only', cancelOnly), mixed, refusedLatencies, seconds };
};

/** The overload's figures and what they must show: cancels keep half their rate, no cancel 5xx, refusals quick. */
const reportOverload = ({ cancelOnly, mixed, refusedLatencies, seconds }: Overload, problems: string[]) => {
  const mixedCancelRate = mixed.cancel.count / seconds;
  const ratio = cancelOnly.perSecond === 0 ? 0 : mixedCancelRate / cancelOnly.perSecond;
  const cancelFiveXx = Object.entries(mixed.cancel.statuses).filter(([status]) => Number(status) >= 500);
  const refusedP99 = percentile(refusedLatencies, 99);
  console.log(
    `\nOverload (${settings.overloadConnections} keep-alive clients, ${seconds} s each):\n` +
      `cancels only: ${cancelOnly.perSecond.toFixed(0)}/s, p50 ${ms(cancelOnly.p50)}, p99 ${ms(cancelOnly.p99)}, ${JSON.stringify(cancelOnly.statuses)}\n` +
      `mixed, cancels: ${mixedCancelRate.toFixed(0)}/s (${(ratio * 100).toFixed(0)} % of cancels only), p50 ${ms(percentile(mixed.cancel.latencies, 50))}, p99 ${ms(percentile(mixed.cancel.latencies, 99))}, ${JSON.stringify(mixed.cancel.statuses)}\n` +
      `mixed, lists: ${mixed.list.count} (${JSON.stringify(mixed.list.statuses)}), answered p50 ${ms(percentile(mixed.list.latencies, 50))}; ` +
      `refused: ${refusedLatencies.length}, p50 ${ms(percentile(refusedLatencies, 50))}, p99 ${ms(refusedP99)}`,
  );
  if (Object.keys(cancelOnly.statuses).some((status) => Number(status) >= 500))
    problems.push(`cancels only: 5xx ${JSON.stringify(cancelOnly.statuses)}`);
  if (cancelFiveXx.length > 0) problems.push(`mixed: cancels answered 5xx ${JSON.stringify(Object.fromEntries(cancelFiveXx))}`);
  if (cancelOnly.errors > 0) problems.push(`cancels only: ${cancelOnly.errors} connection errors or timeouts`);
  if (settings.checkFairness && ratio < 0.5)
    problems.push(`mixed cancels ran at ${(ratio * 100).toFixed(0)} % of their cancel-only rate (at least 50 % expected)`);
  if (settings.checkFairness && refusedP99 >= 1000) problems.push(`refused lists waited up to ${refusedP99} ms (p99) for their refusal`);
};

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

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const ms = (value: number) => `${value} ms`;

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
  let dynamoDb: DynamoDbLocal | undefined;
  const dynamoDbEndpoint = process.env.DYNAMODB_ENDPOINT || (dynamoDb = await startDynamoDbLocal()).endpoint;
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
    for (let round = 1; round <= settings.rounds; round++) {
      const results = await runRound(service, orders, problems, cancels204);
      const memory = await memoryOf(service);
      for (const r of results) {
        rows.push([
          String(round),
          r.route,
          String(r.requests),
          r.perSecond.toFixed(0),
          ms(r.p50),
          ms(r.p99),
          JSON.stringify(r.statuses),
          String(r.errors),
          mb(memory.rss),
          mb(memory.heapUsed),
        ]);
        // A list's 503 is a refusal at the stage's list concurrency (checked above to be service_unavailable), not a failure.
        const isList = r.route.startsWith('GET');
        const fiveXx = Object.entries(r.statuses).filter(([status]) => Number(status) >= 500 && !(isList && status === '503'));
        if (fiveXx.length > 0) problems.push(`round ${round}, ${r.route}: ${JSON.stringify(Object.fromEntries(fiveXx))} 5xx`);
        const allowed = isList ? ['200'] : ['204', '404', '409'];
        const unexpected = Object.keys(r.statuses).filter((status) => !allowed.includes(status) && Number(status) < 500);
        if (unexpected.length > 0) problems.push(`round ${round}, ${r.route}: unexpected status ${unexpected.join(', ')}`);
        if (r.errors > 0) problems.push(`round ${round}, ${r.route}: ${r.errors} connection errors or timeouts`);
      }
    }
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
