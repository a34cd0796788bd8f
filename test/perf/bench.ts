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
import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import { dirname, relative, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gunzipSync } from 'node:zlib';
import { DynamoDBClient, GetItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../infra/local/dynamodb-local.ts';
import type { Gateway } from '../../infra/local/gateway.ts';
import { startLocalApi } from '../../infra/local/local-api.ts';
import { callerPath } from '../../infra/local/start-checks.ts';
import { putOrders } from '../../infra/local/seed.ts';
import { apiKeysTableKey, ensureTable, ordersTableKey } from '../../infra/local/tables.ts';
import { localStage } from '../../infra/stage-config.ts';
import { hashApiKey } from '../../shared/api-keys.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { functionEnvSchema } from '../../shared/config.ts';
import * as z from '../../shared/zod.ts';
import { createDocumentClient, type DocumentClient } from '../../shared/dynamo.ts';
import { cancelOrder } from '../../shared/orders-repository.ts';
import type { Order } from '../../shared/schemas.ts';
import { benchClient, clientReport } from './bench-client.ts';
import { median, report } from './bench-report.ts';
import { benchCallTiming } from './call-timing.ts';

const positiveInt = (name: string, fallback: number, min = 1): number => {
  const text = process.env[name];
  const value = text === undefined || text === '' ? fallback : Number(text);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}, got ${JSON.stringify(text)}`);
  return value;
};

const repoRoot = resolve(import.meta.dirname, '../..');

/** `.local/bench-<UTC time>.json` in the repository (git-ignored): one file per run, none overwritten. */
const defaultOutFile = () => resolve(repoRoot, `.local/bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);

export type BenchSettings = typeof settings;

const settings = {
  orders: positiveInt('BENCH_ORDERS', 100_000, 10),
  reps: positiveInt('BENCH_REPS', 5),
  strict: process.env.BENCH_STRICT === '1',
  out: process.env.BENCH_OUT ? callerPath(process.env.BENCH_OUT) : defaultOutFile(),
  // The segment count the list handler is given (SCAN_SEGMENTS, default the local stage's): the floor scans the same way.
  segments: z._default(functionEnvSchema.shape.SCAN_SEGMENTS.def.innerType, localStage.scanSegments).parse(process.env.SCAN_SEGMENTS),
  memoryRuns: 2,
  // The slow client takes this long for the whole body, longer than the Scan itself.
  slowReadMs: 5_000,
  cancels: 500,
  cancelsSequential: 100,
  cancelWarmup: 50,
  concurrency: 8,
  sampleEveryMs: 20,
};

const tables = { orders: 'bench-orders', apiKeys: 'bench-api-keys' };
const int64Max = '9223372036854775807';
const above2to53 = '9007199254740993';
// Cancel targets get their own id range (also above 2^53), seeded after the list runs so the list sees exactly N orders.
const firstCancelId = 2n ** 53n + 10n;

const started = performance.now();
const seconds = () => `${Math.round((performance.now() - started) / 1000)} s`;
const log = (message: string) => process.stderr.write(`[bench ${seconds()}] ${message}\n`);

/** The run's steps, announced as they begin, so a reader knows how far along it is. */
const steps = [
  'start DynamoDB Local',
  'seed the orders table',
  'list: warm-up and checks',
  'list: timed rounds',
  'list: memory runs',
  'client package: list',
  'cancel: concurrent clients',
  'cancel: one client',
] as const;
const step = (name: (typeof steps)[number], detail = '') =>
  log(`step ${steps.indexOf(name) + 1}/${steps.length}: ${name}${detail === '' ? '' : ` (${detail})`}…`);

// A full GC before each measured request gives memory samples a clean starting point.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

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
// Measuring

/** V8 heap plus the Buffers outside it (response bodies, socket writes): what the process holds for JS. */
const jsMemory = () => {
  const usage = process.memoryUsage();
  return { js: usage.heapUsed + usage.external, rss: usage.rss };
};

/**
 * Runs `task` once while sampling memory every ~20 ms, and counts this process's CPU time.
 * Returns the peak memory growth over the start (taken after a full GC). Plain samples include
 * garbage V8 has not collected yet (the young generation alone is many MB), so `live` runs a
 * full GC before each sample: slower, but it shows what is really held. Timer-driven: a peak
 * inside one synchronous step can be missed.
 */
const measure = async <T>(task: () => Promise<T>, live = false) => {
  gc();
  const start = jsMemory();
  const peak = { ...start };
  const timer = setInterval(() => {
    if (live) gc();
    const now = jsMemory();
    peak.js = Math.max(peak.js, now.js);
    peak.rss = Math.max(peak.rss, now.rss);
  }, settings.sampleEveryMs);
  const cpuStart = process.cpuUsage();
  try {
    const result = await task();
    const cpu = process.cpuUsage(cpuStart);
    return { result, cpuMs: (cpu.user + cpu.system) / 1000, memoryGrowth: peak.js - start.js, rssGrowth: peak.rss - start.rss };
  } finally {
    clearInterval(timer);
  }
};

// ---------------------------------------------------------------------------------------------
// HTTP (node:http rather than fetch: less client overhead in the same process, and raw bytes on the wire)

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

type Reply = { status: number; headers: IncomingHttpHeaders; wireBytes: number; ttfbMs: number; totalMs: number; body?: Buffer };

/**
 * One request; the body is counted and dropped unless `keepBody` (a kept 10 MB body would skew
 * the memory figures). `bytesPerSecond` reads like a slow client: pausing the response stops
 * reading the socket, so a server that honours backpressure waits instead of buffering.
 */
const send = (
  url: string,
  method: string,
  headers: Record<string, string>,
  options: { keepBody?: boolean; bytesPerSecond?: number } = {},
): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { method, headers, agent }, (res) => {
      let ttfbMs: number | undefined;
      let wireBytes = 0;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        ttfbMs ??= performance.now() - started;
        wireBytes += chunk.length;
        if (options.keepBody) chunks.push(chunk);
        if (options.bytesPerSecond === undefined) return;
        const aheadMs = (wireBytes / options.bytesPerSecond) * 1000 - (performance.now() - started);
        if (aheadMs > 1) {
          res.pause();
          setTimeout(() => res.resume(), aheadMs);
        }
      });
      res.on('error', reject);
      res.on('end', () => {
        const totalMs = performance.now() - started;
        if (!res.complete) return reject(new Error(`${method} ${url}: response cut short after ${wireBytes} bytes`));
        const reply: Reply = { status: res.statusCode ?? 0, headers: res.headers, wireBytes, ttfbMs: ttfbMs ?? totalMs, totalMs };
        resolve(options.keepBody ? { ...reply, body: Buffer.concat(chunks) } : reply);
      });
    });
    req.on('error', reject);
    req.end();
  });

const expectStatus = (reply: Reply, status: number, what: string) => {
  if (reply.status !== status) throw new Error(`${what}: expected HTTP ${status}, got ${reply.status} ${reply.body?.toString() ?? ''}`);
};

/** Runs `task` over `items` with `concurrency` workers; returns each call's latency in ms. */
const latencies = async <T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<void>): Promise<number[]> => {
  const times: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      const started = performance.now();
      await task(item);
      times.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return times;
};

// ---------------------------------------------------------------------------------------------
// The floors: what DynamoDB Local itself costs, through the plain SDK client

const rawClient = (endpoint: string) =>
  new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

const projection = ['id', 'petId', 'quantity', 'shipDate', 'complete', 'status'];

/**
 * A parallel Scan of the whole table: no document client, no validation, no JSON. Same projection
 * and segments as the service. Also sums the read units DynamoDB (Local) reports for it.
 */
const rawScan = async (client: DynamoDBClient) => {
  const started = performance.now();
  let firstPageMs: number | undefined;
  let items = 0;
  let pages = 0;
  let readUnits = 0;
  const segment = async (index: number) => {
    let startKey: Record<string, never> | undefined;
    do {
      const page = await client.send(
        new ScanCommand({
          TableName: tables.orders,
          Segment: index,
          TotalSegments: settings.segments,
          ExclusiveStartKey: startKey,
          ProjectionExpression: projection.map((_, i) => `#a${i}`).join(','),
          ExpressionAttributeNames: Object.fromEntries(projection.map((name, i) => [`#a${i}`, name])),
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      firstPageMs ??= performance.now() - started;
      readUnits += page.ConsumedCapacity?.CapacityUnits ?? 0;
      items += page.Count ?? 0;
      pages++;
      startKey = page.LastEvaluatedKey as typeof startKey;
    } while (startKey !== undefined);
  };
  await Promise.all(Array.from({ length: settings.segments }, (_, i) => segment(i)));
  if (items !== settings.orders) throw new Error(`raw Scan saw ${items} items, expected ${settings.orders}`);
  return { totalMs: performance.now() - started, firstPageMs: firstPageMs ?? 0, pages, readUnits };
};

/**
 * The cancel's own write, exactly as the repository builds it (shared/orders-repository.ts's
 * cancelOrder: its key, expression, condition and ALL_OLD on failure), sent through the plain SDK
 * client instead of the document client, with ReturnConsumedCapacity added: its write units.
 */
const rawCancel = async (client: DynamoDBClient, id: string) => {
  let writeUnits = 0;
  // The document client's part, done here: marshal the command's native values, send it as UpdateItem.
  const plain = {
    send: async (command: UpdateCommand, options?: { abortSignal?: AbortSignal }) => {
      const { Key, ExpressionAttributeValues, ...rest } = command.input;
      const output = await client.send(
        new UpdateItemCommand({
          ...rest,
          Key: marshall(Key),
          ...(ExpressionAttributeValues === undefined ? {} : { ExpressionAttributeValues: marshall(ExpressionAttributeValues) }),
          ReturnConsumedCapacity: 'TOTAL',
        }),
        options,
      );
      writeUnits = output.ConsumedCapacity?.CapacityUnits ?? 0;
      return output;
    },
  } as unknown as DocumentClient;
  const { outcome } = await cancelOrder({ client: plain, tableName: tables.orders }, id);
  if (outcome !== 'cancelled') throw new Error(`raw cancel of order ${id}: ${outcome}, expected cancelled`);
  return writeUnits;
};

/** The authorizer's own read (a GetItem of the key's hash): its read units. */
const rawKeyRead = async (client: DynamoDBClient, key: string) => {
  const { ConsumedCapacity } = await client.send(
    new GetItemCommand({ TableName: tables.apiKeys, Key: { keyHash: { S: hashApiKey(key) } }, ReturnConsumedCapacity: 'TOTAL' }),
  );
  return ConsumedCapacity?.CapacityUnits ?? 0;
};

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
  return plain.wireBytes;
};

/** 1–4: the list against the raw Scan, for time, first byte, bytes on the wire, CPU and memory. */
const benchList = async (raw: DynamoDBClient, listUrl: string, auth: Record<string, string>) => {
  step('list: warm-up and checks');
  const { pages, readUnits } = await rawScan(raw);
  const bodyBytes = await checkList(listUrl, auth);
  const listOnce = async (options: { gzip?: boolean; bytesPerSecond?: number } = {}) => {
    const headers = options.gzip ? { ...auth, 'Accept-Encoding': 'gzip' } : auth;
    const reply = await send(listUrl, 'GET', headers, { bytesPerSecond: options.bytesPerSecond });
    expectStatus(reply, 200, 'GET orders');
    if (!options.gzip && reply.wireBytes !== bodyBytes)
      throw new Error(`GET orders sent ${reply.wireBytes} bytes, the checked run ${bodyBytes}`);
    return reply;
  };

  const series = () => ({ totalMs: [] as number[], ttfbMs: [] as number[], cpuMs: [] as number[], memoryGrowth: [] as number[] });
  const scan = { ...series(), liveMemoryGrowth: [] as number[] };
  const list = { ...series(), liveMemoryGrowth: [] as number[], slowLiveMemoryGrowth: [] as number[], slowTotalMs: [] as number[] };
  const gzip = { ...series(), wireBytes: [] as number[] };
  let rssGrowth = 0;
  // One round = scan, list, list gzip, so drift (JIT warm-up of the JVM and of Node, other work
  // on the machine) hits all three alike.
  step('list: timed rounds', `${settings.reps} rounds of raw Scan, list, list with gzip`);
  for (let rep = 1; rep <= settings.reps; rep++) {
    log(`  round ${rep}/${settings.reps}`);
    const scanned = await measure(() => rawScan(raw));
    const plain = await measure(() => listOnce());
    // The compressed body is counted, not unzipped: a client's gunzip would run on the server's cores here.
    const zipped = await measure(() => listOnce({ gzip: true }));
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
  return { scanPages: pages, scanReadUnits: readUnits, bodyBytes, scan, list, gzip, rssGrowth };
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
    documentClient = createDocumentClient({ endpoint: dynamoDb.endpoint });
    raw = rawClient(dynamoDb.endpoint);
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
    const { text, json, missed: serviceMissed } = report({ seedMs, ...listed, ...cancelled }, settings);
    const missed = serviceMissed + clientBench.missed;
    await mkdir(dirname(settings.out), { recursive: true });
    const { text: timingText, ...timingFigures } = timing;
    await writeFile(settings.out, `${JSON.stringify({ ...json, client: clientBench.json, callTiming: timingFigures }, null, 2)}\n`);
    process.stdout.write(
      `${text}\n${clientBench.text}\n${timingText}\nFull results, every sample: ${relative(process.cwd(), settings.out)}\n`,
    );
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
