/**
 * `npm run bench`, the v2 list's part: the store read whole through `GET /v2/store/orders` at the
 * largest page size, beside the v1 stream and beside a raw paginated Scan of the same page size
 * (the floor: what DynamoDB Local takes to hand over the same pages, no service), alternating so
 * that drift hits each alike. Reports the total time as a ratio to the raw Scan, the latency of an
 * early and a late page, what a status-filtered page costs against an unfiltered one (time, items
 * DynamoDB read, capacity), and a read split in 4 parts against 1.
 *
 *   BENCH_ORDERS  orders in the table (default 100000)
 *   BENCH_REPS    timed repetitions of each read, after one warm-up (default 3)
 *   BENCH_OUT     the file for every sample as JSON (default .local/bench-paged-<time>.json)
 *
 * Everything runs in this one process: DynamoDB Local (a Java child), the local gateway with the
 * real handlers, and the HTTP client.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { DynamoDBClient, QueryCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDbLocal } from '../../infra/local/dynamodb-local.ts';
import type { Gateway } from '../../infra/local/gateway.ts';
import { localStage } from '../../infra/stage-config.ts';
import type { DocumentClient } from '../../shared/dynamo.ts';
import { pageSizeBounds } from '../../functions/list-orders-paged/list-query.ts';
import type { Order } from '../../shared/schemas.ts';
import { statusIndex } from '../../shared/status-index.ts';

const positiveInt = (name: string, fallback: number): number => {
  const text = process.env[name];
  const value = text === undefined || text === '' ? fallback : Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be an integer ≥ 1, got ${JSON.stringify(text)}`);
  return value;
};

const repoRoot = resolve(import.meta.dirname, '../..');
const settings = {
  orders: positiveInt('BENCH_ORDERS', 100_000),
  reps: positiveInt('BENCH_REPS', 3),
  pageSize: pageSizeBounds.max,
  parts: 4,
  out: resolve(
    process.cwd(),
    process.env.BENCH_OUT ?? resolve(repoRoot, `.local/bench-paged-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
  ),
};
/** Targets of the v2 list: total time within 1.2× the raw Scan of the same pages; late pages as fast as early ones. */
export const pagedTargets = { totalToScan: 1.2, lateToEarly: 1.2 };

const tables = { orders: 'bench-paged-orders', apiKeys: 'bench-paged-api-keys' };
const statuses = ['pending', 'placed', 'shipped', 'cancelled'] as const;
const started = performance.now();
const log = (message: string) => process.stderr.write(`[bench-paged ${Math.round((performance.now() - started) / 1000)} s] ${message}\n`);

/** N orders, a quarter of each status; the last hundred ids above 2^53, the last one int64's maximum. */
const pagedOrders = (n: number): Order[] =>
  Array.from({ length: n }, (_, i) => ({
    id: i === n - 1 ? '9223372036854775807' : i >= n - 100 ? String(2n ** 53n + BigInt(i)) : String(i + 1),
    petId: String(1000 + (i % 5000)),
    quantity: String(1 + (i % 5)),
    ...(i % 10 === 0 ? {} : { shipDate: new Date(Date.UTC(2026, 0, 1) + (i % 365) * 86_400_000).toISOString() }),
    complete: i % 4 === 2,
    status: statuses[i % 4]!,
  }));

// Not ./bench-report.ts's: it loads the service's modules (and their logger) before main() can silence them.
const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
};

const timed = async <T>(task: () => Promise<T>) => {
  const start = performance.now();
  const result = await task();
  return { result, ms: performance.now() - start };
};

// ---------------------------------------------------------------------------------------------
// The floor: a raw paginated Scan, as the v2 function reads (same Limit, same projection).

const projected = ['id', 'petId', 'quantity', 'shipDate', 'complete', 'status'];
const projection = {
  ProjectionExpression: projected.map((_, i) => `#a${i}`).join(','),
  ExpressionAttributeNames: Object.fromEntries(projected.map((name, i) => [`#a${i}`, name])),
};

/** Every page of a Scan (or of one segment), sequentially; the items read and capacity DynamoDB reports. */
const rawScan = async (raw: DynamoDBClient, segment?: { segment: number; totalSegments: number }) => {
  let items = 0;
  let startKey: Record<string, never> | undefined;
  do {
    const page = await raw.send(
      new ScanCommand({
        TableName: tables.orders,
        Limit: settings.pageSize,
        ExclusiveStartKey: startKey,
        ...projection,
        ...(segment === undefined ? {} : { Segment: segment.segment, TotalSegments: segment.totalSegments }),
      }),
    );
    items += page.Count ?? 0;
    startKey = page.LastEvaluatedKey as typeof startKey;
  } while (startKey !== undefined);
  return items;
};

/** One page as DynamoDB reads it for the v2 function: items read (ScannedCount) and read capacity. */
const rawPageCost = async (raw: DynamoDBClient, source: 'scan' | 'status') => {
  const common = { TableName: tables.orders, Limit: settings.pageSize, ReturnConsumedCapacity: 'TOTAL' as const };
  const page =
    source === 'scan'
      ? await raw.send(new ScanCommand({ ...common, ...projection }))
      : await raw.send(
          new QueryCommand({
            ...common,
            IndexName: statusIndex.name,
            KeyConditionExpression: '#s = :s',
            ExpressionAttributeNames: { '#s': statusIndex.partitionKey },
            ExpressionAttributeValues: { ':s': { S: 'pending' } },
          }),
        );
  return { itemsRead: page.ScannedCount ?? 0, readUnits: page.ConsumedCapacity?.CapacityUnits };
};

// ---------------------------------------------------------------------------------------------
// Through the service.

type Api = { readonly v1: string; readonly v2: string; readonly auth: Record<string, string> };

/**
 * Every page of a v2 read with these parameters, following nextCursor; each page's latency (to the
 * whole body). `ids` collects the ids as their exact text (the warm-up round checks each came once).
 */
const readV2 = async (api: Api, parameters: Record<string, string>, ids?: Set<string>) => {
  const pageMs: number[] = [];
  let orders = 0;
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ ...parameters, pageSize: String(settings.pageSize), ...(cursor === undefined ? {} : { cursor }) });
    const start = performance.now();
    const response = await fetch(`${api.v2}/store/orders?${query}`, { headers: api.auth });
    const text = await response.text();
    pageMs.push(performance.now() - start);
    if (response.status !== 200) throw new Error(`v2 page answered ${response.status}: ${text.slice(0, 200)}`);
    if (ids !== undefined) for (const match of text.matchAll(/"id":(-?\d+)/g)) ids.add(match[1]!);
    const page = JSON.parse(text) as { orders: unknown[]; nextCursor?: string };
    orders += page.orders.length;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { pageMs, orders };
};

/** The v1 list, streamed whole. */
const readV1 = async (api: Api) => {
  const response = await fetch(`${api.v1}/store/orders`, { headers: api.auth });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`v1 list answered ${response.status}`);
  return text.length;
};

/** All parts of a split read at once, each paged on its own. */
const readSplit = async (api: Api, parts: number) => {
  const reads = await Promise.all(
    Array.from({ length: parts }, (_, i) => readV2(api, parts === 1 ? {} : { part: String(i + 1), parts: String(parts) })),
  );
  return reads.reduce((sum, read) => sum + read.orders, 0);
};

// ---------------------------------------------------------------------------------------------
// The rounds, alternating, and the report.

const measureReads = async (raw: DynamoDBClient, api: Api) => {
  const samples = {
    scanMs: [] as number[],
    v2Ms: [] as number[],
    v1Ms: [] as number[],
    split1Ms: [] as number[],
    split4Ms: [] as number[],
  };
  const early: number[] = [];
  const late: number[] = [];
  for (let round = 0; round <= settings.reps; round++) {
    log(round === 0 ? 'warm-up round' : `round ${round} of ${settings.reps}`);
    const ids = round === 0 ? new Set<string>() : undefined;
    const scan = await timed(() => rawScan(raw));
    // The read right after the raw Scan was the slowest in the runs of test/perf/results.md#the-v2-list,
    // whichever it was: the v2 read comes last; the 1-part read (the same requests) takes that place.
    const split1 = await timed(() => readSplit(api, 1));
    const v1 = await timed(() => readV1(api));
    const split4 = await timed(() => readSplit(api, settings.parts));
    const v2 = await timed(() => readV2(api, {}, ids));
    const expected = settings.orders;
    for (const [what, count] of [
      ['raw Scan', scan.result],
      ['v2 read', v2.result.orders],
      ...(ids === undefined ? [] : [['v2 distinct ids', ids.size] as const]),
      ['4-part read', split4.result],
    ] as const)
      if (count !== expected) throw new Error(`${what}: ${count} orders, expected ${expected}`);
    if (round === 0) continue;
    samples.scanMs.push(scan.ms);
    samples.v2Ms.push(v2.ms);
    samples.v1Ms.push(v1.ms);
    samples.split4Ms.push(split4.ms);
    samples.split1Ms.push(split1.ms);
    // Early: pages 2–11 (the first pays for its cursor-less start); late: the last ten but the last (short).
    const pages = v2.result.pageMs;
    early.push(...pages.slice(1, 11));
    late.push(...pages.slice(-11, -1));
  }
  return { ...samples, early, late };
};

/** A status-filtered page against an unfiltered one: latency through the service, and DynamoDB's cost. */
const measureFilteredPage = async (raw: DynamoDBClient, api: Api) => {
  const page = async (query: string) => {
    const times: number[] = [];
    let orders = 0;
    for (let i = 0; i <= settings.reps * 5; i++) {
      const start = performance.now();
      const response = await fetch(`${api.v2}/store/orders?pageSize=${settings.pageSize}${query}`, { headers: api.auth });
      const body = (await response.json()) as { orders: unknown[] };
      if (i > 0) times.push(performance.now() - start);
      orders = body.orders.length;
    }
    return { ms: median(times), p99Ms: Math.max(...times), orders };
  };
  return {
    unfiltered: { ...(await page('')), ...(await rawPageCost(raw, 'scan')) },
    status: { ...(await page('&status=pending')), ...(await rawPageCost(raw, 'status')) },
  };
};

const ratio = (a: number, b: number) => (a / b).toFixed(2);
const ms = (value: number) => `${Math.round(value)} ms`;
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;

const reportText = (reads: Awaited<ReturnType<typeof measureReads>>, filtered: Awaited<ReturnType<typeof measureFilteredPage>>) => {
  const scan = median(reads.scanMs);
  const totalRatio = median(reads.v2Ms) / scan;
  const lateRatio = median(reads.late) / median(reads.early);
  const meets = (value: number, target: number) => (value <= target ? `target ≤ ${target}×: met` : `target ≤ ${target}×: MISSED`);
  const allPages = [...reads.early, ...reads.late];
  const f = filtered;
  return [
    `v2 list, ${settings.orders} orders, pageSize ${settings.pageSize}, medians of ${settings.reps} rounds after a warm-up:`,
    `  raw paginated Scan (floor)   ${ms(scan)}`,
    `  v2 read, every page          ${ms(median(reads.v2Ms))}  ${ratio(median(reads.v2Ms), scan)}× the Scan  (${meets(totalRatio, pagedTargets.totalToScan)})`,
    `  v1 stream                    ${ms(median(reads.v1Ms))}  ${ratio(median(reads.v1Ms), scan)}× the Scan`,
    `  page latency early (pages 2–11) ${ms(median(reads.early))}, late (last 10) ${ms(median(reads.late))}: late/early ${lateRatio.toFixed(2)}  (${meets(lateRatio, pagedTargets.lateToEarly)})`,
    `  page latency over those pages: p50 ${ms(percentile(allPages, 50))}, p99 ${ms(percentile(allPages, 99))}, max ${ms(Math.max(...allPages))}`,
    `  split read, all parts at once: 4 parts ${ms(median(reads.split4Ms))}, 1 part ${ms(median(reads.split1Ms))}: ${ratio(median(reads.split4Ms), median(reads.split1Ms))}× (DynamoDB Local shares 2 cores: segments gain nothing here)`,
    `  one page, unfiltered: ${ms(f.unfiltered.ms)} (max ${ms(f.unfiltered.p99Ms)}), ${f.unfiltered.orders} orders, DynamoDB read ${f.unfiltered.itemsRead} items, ${f.unfiltered.readUnits ?? '?'} RCU`,
    `  one page, status=pending: ${ms(f.status.ms)} (max ${ms(f.status.p99Ms)}), ${f.status.orders} orders, DynamoDB read ${f.status.itemsRead} items, ${f.status.readUnits ?? '?'} RCU`,
  ].join('\n');
};

const seedAndServe = async (dynamoDb: DynamoDbLocal, client: DocumentClient) => {
  const { putOrders } = await import('../../infra/local/seed.ts');
  const { apiKeysTableKey, ensureTable, ordersTableKey } = await import('../../infra/local/local-tables.ts');
  const { createApiKey } = await import('../../infra/ops/key-store.ts');
  const { startLocalApi } = await import('../../infra/local/local-api.ts');
  await ensureTable(client, tables.orders, ordersTableKey);
  await ensureTable(client, tables.apiKeys, apiKeysTableKey);
  log(`seeding ${settings.orders} orders`);
  const seed = await timed(() => putOrders({ client, tableName: tables.orders }, pagedOrders(settings.orders)));
  log(`seeded in ${(seed.ms / 1000).toFixed(1)} s`);
  const apiKeys = { client, tableName: tables.apiKeys };
  const { key } = await createApiKey(apiKeys, { name: 'bench', prefix: 'so_bench_', tier: localStage.developerKeyTier });
  const gateway = await startLocalApi({
    port: 0,
    dynamoDbEndpoint: dynamoDb.endpoint,
    ordersTable: tables.orders,
    apiKeysTable: tables.apiKeys,
    listLeasesTable: `${tables.orders}-list-leases`,
  });
  return { gateway, key };
};

const main = async () => {
  // Before the service's modules load (hence the imports below): their per-request log and EMF lines would drown the report.
  process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.AWS_REGION ??= 'us-east-1';
  const { credentialsEnvironment, startDynamoDbLocal } = await import('../../infra/local/dynamodb-local.ts');
  const { createDocumentClient } = await import('../../shared/dynamo.ts');
  let dynamoDb: DynamoDbLocal | undefined;
  let gateway: Gateway | undefined;
  let client: DocumentClient | undefined;
  let raw: DynamoDBClient | undefined;
  try {
    dynamoDb = await startDynamoDbLocal();
    // It answers only its own credentials: this program's clients, and the functions it runs, sign with them.
    Object.assign(process.env, credentialsEnvironment(dynamoDb.credentials));
    client = createDocumentClient({ endpoint: dynamoDb.endpoint });
    raw = new DynamoDBClient({ endpoint: dynamoDb.endpoint, region: 'us-east-1', credentials: dynamoDb.credentials });
    const served = await seedAndServe(dynamoDb, client);
    gateway = served.gateway;
    const api = { v1: gateway.url, v2: gateway.url.replace(/\/v1$/, '/v2'), auth: { Authorization: `Bearer ${served.key}` } };
    const reads = await measureReads(raw, api);
    const filtered = await measureFilteredPage(raw, api);
    const text = reportText(reads, filtered);
    await mkdir(dirname(settings.out), { recursive: true });
    await writeFile(settings.out, `${JSON.stringify({ settings, reads, filtered }, null, 2)}\n`);
    process.stdout.write(`${text}\nFull results, every sample: ${relative(process.cwd(), settings.out)}\n`);
  } finally {
    await gateway?.close().catch(() => undefined);
    client?.destroy();
    raw?.destroy();
    await dynamoDb?.stop();
  }
};

try {
  await main();
} catch (error) {
  console.error(`bench-paged failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
}
