/**
 * `npm run bench`: the service's speed and memory, as ratios against floors measured in the
 * same run on the same machine (absolute milliseconds mean little on a noisy 2-core box).
 *
 *   BENCH_ORDERS  orders in the table (default 100000)
 *   BENCH_REPS    timed repetitions of each list measurement, after one warm-up (default 5)
 *   BENCH_STRICT  1: exit 1 when a target is missed (default: report only, exit 0)
 *   BENCH_OUT     the file for the full results as JSON, every sample included
 *                 (default .local/bench-<time>.json; a relative path is taken from where npm runs)
 *
 * Everything runs in this one process: DynamoDB Local (a Java child process), the local
 * gateway with the real handlers, and the HTTP client. Progress, one line per step with the
 * time so far, goes to stderr; the table and the targets go to stdout; the JSON to the file.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { credentialsEnvironment, type DynamoDbLocal, startDynamoDbLocal } from '../../infra/local/dynamodb-local.ts';
import type { Gateway } from '../../infra/local/gateway.ts';
import { startLocalApi } from '../../infra/local/local-api.ts';
import { putOrders } from '../../infra/local/seed.ts';
import { apiKeysTableKey, ensureTable, ordersTableKey } from '../../infra/local/local-tables.ts';
import { localStage } from '../../infra/stage-config.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { createDocumentClient, type DocumentClient } from '../../shared/dynamo.ts';
import type { Order } from '../../shared/schemas.ts';
import { benchClient, clientReport } from './bench-client.ts';
import { median, report } from './bench-report.ts';
import { benchCallTiming } from './call-timing.ts';
import { rawCancel, rawClient, rawKeyRead, rawScan } from './bench-floors.ts';
import { agent, expectStatus, latencies, measure, send } from './bench-measure.ts';
import { log, settings, step, tables } from './bench-settings.ts';

const int64Max = '9223372036854775807';
const above2to53 = '9007199254740993';
// Cancel targets get their own id range (also above 2^53), seeded after the list runs so the list sees exactly N orders.
const firstCancelId = 2n ** 53n + 10n;

// ---------------------------------------------------------------------------------------------
// Data

const statuses = ['pending', 'placed', 'shipped', 'cancelled'] as const;

/** N realistic orders: ids 1…N-2 plus one just above 2^53 and one at int64 max. */
const benchOrders = (n: number): Order[] => {
  const order = (id: string, i: number): Order => ({
    id,
    petId: i === n ? '9223372036854775806' : String(1000 + (i % 5000)),
    quantity: String(1 + (i % 5)),
    ...(i % 10 === 0 ? {} : { shipDate: new Date(Date.UTC(2026, 0, 1) + (i % 365) * 86_400_000).toISOString() }),
    complete: i % 4 === 2,
    status: statuses[i % 4]!,
  });
  const orders = Array.from({ length: n - 2 }, (_, i) => order(String(i + 1), i + 1));
  orders.push(order(above2to53, n - 1), order(int64Max, n));
  return orders;
};

const idRange = (from: bigint, count: number) => Array.from({ length: count }, (_, i) => String(from + BigInt(i)));

// ---------------------------------------------------------------------------------------------
// The benchmark

/** The warm-up lists: read whole and checked, so the timed runs only count bytes. */
const checkList = async (listUrl: string, auth: Record<string, string>) => {
  const plain = await send(listUrl, 'GET', auth, { keepBody: true });
  expectStatus(plain, 200, 'GET orders');
  const text = plain.body!.toString('utf8');
  const count = (JSON.parse(text) as unknown[]).length;
  if (count !== settings.orders) throw new Error(`GET orders returned ${count} orders, expected ${settings.orders}`);
  for (const id of [int64Max, above2to53]) {
    const hits = text.split(new RegExp(`"id":${id}[,}]`)).length - 1;
    if (hits !== 1) throw new Error(`GET orders: id ${id} appears ${hits} times with every digit, expected once`);
  }
  const zipped = await send(listUrl, 'GET', { ...auth, 'Accept-Encoding': 'gzip' }, { keepBody: true });
  expectStatus(zipped, 200, 'GET orders (gzip)');
  if (zipped.headers['content-encoding'] !== 'gzip') throw new Error('GET orders with Accept-Encoding: gzip was not gzipped');
  const unzipped = gunzipSync(zipped.body!);
  if (unzipped.length !== plain.wireBytes) throw new Error(`gzip body unzips to ${unzipped.length} bytes, identity has ${plain.wireBytes}`);
  const withText = await send(`${listUrl}?stringIds=true`, 'GET', auth, { keepBody: true });
  expectStatus(withText, 200, 'GET orders?stringIds=true');
  if (!withText.body!.toString('utf8').includes(`"id":${int64Max},"idStr":"${int64Max}"`))
    throw new Error('GET orders?stringIds=true: int64 max has no idStr with every digit');
  return plain.wireBytes;
};

/** 1–4: the list against the raw Scan, for time, first byte, bytes on the wire, CPU and memory. */
const benchList = async (raw: DynamoDBClient, listUrl: string, auth: Record<string, string>) => {
  step('list: warm-up and checks');
  const { pages, readUnits } = await rawScan(raw);
  const bodyBytes = await checkList(listUrl, auth);
  const listOnce = async (options: { gzip?: boolean; bytesPerSecond?: number; stringIds?: boolean } = {}) => {
    const headers = options.gzip ? { ...auth, 'Accept-Encoding': 'gzip' } : auth;
    const url = options.stringIds ? `${listUrl}?stringIds=true` : listUrl;
    const reply = await send(url, 'GET', headers, { bytesPerSecond: options.bytesPerSecond });
    expectStatus(reply, 200, 'GET orders');
    if (!options.gzip && !options.stringIds && reply.wireBytes !== bodyBytes)
      throw new Error(`GET orders sent ${reply.wireBytes} bytes, the checked run ${bodyBytes}`);
    return reply;
  };

  const series = () => ({ totalMs: [] as number[], ttfbMs: [] as number[], cpuMs: [] as number[], memoryGrowth: [] as number[] });
  const scan = { ...series(), liveMemoryGrowth: [] as number[] };
  const list = { ...series(), liveMemoryGrowth: [] as number[], slowLiveMemoryGrowth: [] as number[], slowTotalMs: [] as number[] };
  const gzip = { ...series(), wireBytes: [] as number[] };
  // The opt-in text ids (docs/decisions/0941-order-id-is-text-with-the-services-exact-pattern.md): time and bytes beside the plain list.
  const stringIds = { totalMs: [] as number[], wireBytes: [] as number[] };
  let rssGrowth = 0;
  // One round = scan, list, list gzip, so drift (JIT warm-up of the JVM and of Node, other work
  // on the machine) hits all three alike.
  step('list: timed rounds', `${settings.reps} rounds of raw Scan, list, list with gzip, list with stringIds`);
  for (let rep = 1; rep <= settings.reps; rep++) {
    log(`  round ${rep}/${settings.reps}`);
    const scanned = await measure(() => rawScan(raw));
    const plain = await measure(() => listOnce());
    // The compressed body is counted, not unzipped: a client's gunzip would run on the server's cores here.
    const zipped = await measure(() => listOnce({ gzip: true }));
    const withText = await measure(() => listOnce({ stringIds: true }));
    stringIds.totalMs.push(withText.result.totalMs);
    stringIds.wireBytes.push(withText.result.wireBytes);
    for (const [into, run, ttfbMs] of [
      [scan, scanned, scanned.result.firstPageMs],
      [list, plain, plain.result.ttfbMs],
      [gzip, zipped, zipped.result.ttfbMs],
    ] as const) {
      into.totalMs.push(run.result.totalMs);
      into.ttfbMs.push(ttfbMs);
      into.cpuMs.push(run.cpuMs);
      into.memoryGrowth.push(run.memoryGrowth);
    }
    gzip.wireBytes.push(zipped.result.wireBytes);
    rssGrowth = Math.max(rssGrowth, plain.rssGrowth);
  }
  // Live memory needs a GC per sample, which slows everything down: separate, untimed runs.
  step('list: memory runs', `${settings.memoryRuns} runs, each with a client reading for ${settings.slowReadMs / 1000} s`);
  for (let rep = 1; rep <= settings.memoryRuns; rep++) {
    log(`  memory run ${rep}/${settings.memoryRuns}`);
    scan.liveMemoryGrowth.push((await measure(() => rawScan(raw), true)).memoryGrowth);
    list.liveMemoryGrowth.push((await measure(() => listOnce(), true)).memoryGrowth);
    // A client slower than the Scan: whatever the service cannot send yet, it must either hold or not read yet.
    const slow = await measure(() => listOnce({ bytesPerSecond: bodyBytes / (settings.slowReadMs / 1000) }), true);
    list.slowLiveMemoryGrowth.push(slow.memoryGrowth);
    list.slowTotalMs.push(slow.result.totalMs);
  }
  return { scanPages: pages, scanReadUnits: readUnits, bodyBytes, scan, list, gzip, stringIds, rssGrowth };
};

/**
 * 5–6: cancel against its raw UpdateItem, each on fresh pending orders (a repeat would take the
 * ConditionalCheckFailed path), and the gateway's floor: a 404 route_not_found runs no
 * authorizer and no handler. At concurrency 8 (the target) and 1 (the per-request cost without
 * DynamoDB Local's queueing). Raw and HTTP alternate in blocks so drift hits both alike.
 */
const benchCancel = async (
  orders: { client: DocumentClient; tableName: string },
  raw: DynamoDBClient,
  gateway: Gateway,
  auth: Record<string, string>,
) => {
  const perLevel = (count: number) => 2 * (settings.cancelWarmup + count);
  const pending = idRange(firstCancelId, perLevel(settings.cancels) + perLevel(settings.cancelsSequential));
  await putOrders(
    orders,
    pending.map((id) => ({ id, petId: '1', quantity: '1', complete: false, status: 'pending' })),
  );
  const fresh = (count: number) => pending.splice(0, count);
  const notFound = async () => expectStatus(await send(`${gateway.url}/store/no-such-route`, 'GET', auth), 404, 'GET unknown route');
  // A well-formed key that is not in the table: the authorizer runs for every one (only an Allow is cached).
  const unknownKey = { Authorization: `Bearer so_bench_${'A'.repeat(43)}` };
  const refused = async () =>
    expectStatus(await send(`${gateway.url}/store/orders/1`, 'DELETE', unknownKey), 401, 'DELETE with an unknown key');
  const writeUnits: number[] = [];
  const cancelHttp = async (id: string) =>
    expectStatus(await send(`${gateway.url}/store/orders/${id}`, 'DELETE', auth), 204, `DELETE order ${id}`);
  const cancelRaw = async (id: string) => void writeUnits.push(await rawCancel(raw, id));
  const level = async (concurrency: number, count: number) => {
    step(
      concurrency === 1 ? 'cancel: one client' : 'cancel: concurrent clients',
      `concurrency ${concurrency}, ${count} cancels, UpdateItems, 404s and unknown keys`,
    );
    const figures = { floor: [] as number[], update: [] as number[], cancel: [] as number[], refused: [] as number[] };
    await latencies(idRange(0n, settings.cancelWarmup), concurrency, notFound);
    await latencies(idRange(0n, settings.cancelWarmup), concurrency, refused);
    await latencies(fresh(settings.cancelWarmup), concurrency, cancelRaw);
    await latencies(fresh(settings.cancelWarmup), concurrency, cancelHttp);
    const block = Math.ceil(count / 5);
    for (let done = 0; done < count; done += block) {
      const size = Math.min(block, count - done);
      figures.floor.push(...(await latencies(idRange(0n, size), concurrency, notFound)));
      figures.update.push(...(await latencies(fresh(size), concurrency, cancelRaw)));
      figures.cancel.push(...(await latencies(fresh(size), concurrency, cancelHttp)));
      figures.refused.push(...(await latencies(idRange(0n, size), concurrency, refused)));
    }
    return figures;
  };
  const concurrent = await level(settings.concurrency, settings.cancels);
  const sequential = await level(1, settings.cancelsSequential);
  const keyReadUnits = await rawKeyRead(raw, unknownKey.Authorization.slice('Bearer '.length));
  return { concurrent, sequential, writeUnitsPerCancel: median(writeUnits), keyReadUnits };
};

// ---------------------------------------------------------------------------------------------
// Report (./bench-report.ts)

export type Measured = { seedMs: number } & Awaited<ReturnType<typeof benchList>> & Awaited<ReturnType<typeof benchCancel>>;

// ---------------------------------------------------------------------------------------------

/** The tables, the N orders (timed: the report's seed figure) and the bench's own key. */
const seed = async (documentClient: DocumentClient) => {
  const orders = { client: documentClient, tableName: tables.orders };
  await ensureTable(documentClient, tables.orders, ordersTableKey);
  await ensureTable(documentClient, tables.apiKeys, apiKeysTableKey);
  step('seed the orders table', `${settings.orders} orders`);
  const seedStarted = performance.now();
  await putOrders(orders, benchOrders(settings.orders));
  const seedMs = performance.now() - seedStarted;
  log(`  seeded in ${(seedMs / 1000).toFixed(1)} s`);
  const { key } = await createApiKey(
    { client: documentClient, tableName: tables.apiKeys },
    { name: 'bench', prefix: 'so_bench_', tier: localStage.developerKeyTier },
  );
  return { seedMs, key };
};

/** The table and targets on stdout, every sample in the JSON file; the number of targets missed. */
const writeResults = async (
  measured: Measured,
  clientBench: ReturnType<typeof clientReport>,
  timing: Awaited<ReturnType<typeof benchCallTiming>>,
) => {
  const { text, json, missed: serviceMissed } = report(measured, settings);
  await mkdir(dirname(settings.out), { recursive: true });
  const { text: timingText, ...timingFigures } = timing;
  await writeFile(settings.out, `${JSON.stringify({ ...json, client: clientBench.json, callTiming: timingFigures }, null, 2)}\n`);
  process.stdout.write(
    `${text}\n${clientBench.text}\n${timingText}\nFull results, every sample: ${relative(process.cwd(), settings.out)}\n`,
  );
  return serviceMissed + clientBench.missed;
};

const main = async () => {
  // As in vitest.config.ts: the handlers' per-request logs and EMF lines would drown the report.
  process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.AWS_REGION ??= 'us-east-1';

  let dynamoDb: DynamoDbLocal | undefined;
  let gateway: Gateway | undefined;
  let documentClient: DocumentClient | undefined;
  let raw: DynamoDBClient | undefined;
  // A signal skips `finally`: stop the Java child here too, so no orphan survives a Ctrl-C or a kill.
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping`);
    void Promise.allSettled([gateway?.close(), dynamoDb?.stop()]).then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    step('start DynamoDB Local');
    dynamoDb = await startDynamoDbLocal();
    // It answers only its own credentials: this program's clients, and the functions it runs, sign with them.
    Object.assign(process.env, credentialsEnvironment(dynamoDb.credentials));
    documentClient = createDocumentClient({ endpoint: dynamoDb.endpoint });
    raw = rawClient(dynamoDb.endpoint);
    const orders = { client: documentClient, tableName: tables.orders };
    const { seedMs, key } = await seed(documentClient);
    const auth = { Authorization: `Bearer ${key}` };
    gateway = await startLocalApi({
      port: 0,
      dynamoDbEndpoint: dynamoDb.endpoint,
      ordersTable: tables.orders,
      apiKeysTable: tables.apiKeys,
      listLeasesTable: `${tables.orders}-list-leases`,
      stage: { ...localStage, scanSegments: settings.segments },
    });

    const listed = await benchList(raw, `${gateway.url}/store/orders`, auth);
    // Before the cancels, which add orders of their own: the client lists exactly the seeded ones.
    step('client package: list', `${settings.reps} rounds of fetch + JSON.parse and of the client (bench-client.ts)`);
    const clientBench = clientReport(
      await benchClient({ baseUrl: gateway.url, apiKey: key, orders: settings.orders, reps: settings.reps, log }),
      settings.orders,
    );
    const cancelled = await benchCancel(orders, raw, gateway, auth);
    const timing = await benchCallTiming(dynamoDb.endpoint, tables.apiKeys);
    const missed = await writeResults({ seedMs, ...listed, ...cancelled }, clientBench, timing);
    log('done');
    if (missed > 0 && settings.strict) {
      log(`${missed} target(s) missed and BENCH_STRICT=1`);
      process.exitCode = 1;
    }
  } finally {
    await gateway?.close().catch(() => undefined);
    agent.destroy();
    documentClient?.destroy();
    raw?.destroy();
    await dynamoDb?.stop();
  }
};

try {
  await main();
} catch (error) {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
}
