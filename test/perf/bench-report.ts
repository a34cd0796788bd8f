/**
 * The benchmark's report (./bench.ts measures): each measurement summarised, the rows of the
 * table with their ratios to the floors, the targets with their verdicts, the cost model's
 * inputs from this run, then the text for stdout and the JSON for the results file.
 */
import { cpus } from 'node:os';
import { type CostInputs, costScenarios, costText, type Scenario } from './cost.ts';

type Samples = readonly number[];

/**
 * What the report reads of a run, as ./bench.ts measures it (its own types are wider: the JSON's
 * `settings` and `samples` carry everything it passes). Declared here, not imported, so that the
 * report does not import the program that imports it.
 */
export type Measured = {
  readonly seedMs: number;
  readonly scanPages: number;
  readonly scanReadUnits: number;
  readonly bodyBytes: number;
  readonly rssGrowth: number;
  readonly scan: Readonly<Record<'totalMs' | 'ttfbMs' | 'cpuMs' | 'liveMemoryGrowth' | 'memoryGrowth', Samples>>;
  readonly list: Readonly<
    Record<'totalMs' | 'ttfbMs' | 'cpuMs' | 'liveMemoryGrowth' | 'slowLiveMemoryGrowth' | 'slowTotalMs' | 'memoryGrowth', Samples>
  >;
  readonly gzip: Readonly<Record<'totalMs' | 'cpuMs' | 'wireBytes', Samples>>;
  readonly stringIds: Readonly<Record<'totalMs' | 'wireBytes', Samples>>;
  readonly concurrent: CancelLatencies;
  readonly sequential: CancelLatencies;
  readonly writeUnitsPerCancel: number;
  readonly keyReadUnits: number;
};
type CancelLatencies = Readonly<Record<'floor' | 'update' | 'cancel' | 'refused', Samples>>;

/** The run's settings the report names (./bench.ts `settings`). */
export type BenchSettings = Readonly<
  Record<
    'orders' | 'reps' | 'segments' | 'memoryRuns' | 'slowReadMs' | 'cancels' | 'cancelsSequential' | 'concurrency' | 'sampleEveryMs',
    number
  >
>;

const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);
export const median = (values: readonly number[]) => {
  const s = sorted(values);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
/** Nearest-rank percentile. */
const percentile = (values: readonly number[], p: number) => sorted(values)[Math.max(0, Math.ceil((p / 100) * values.length) - 1)]!;
const summary = (values: readonly number[]) => ({
  medianMs: median(values),
  minMs: Math.min(...values),
  p95Ms: percentile(values, 95),
  samples: values.length,
});

type Row = { name: string; what: string; cpuMs?: number; vs?: string; ratio?: number } & ReturnType<typeof summary>;
type Target = { target: string; value: number; limit: number; unit: string; note?: string; verdict: 'PASS' | 'MISS' | 'n/a' };
type Cost = { inputs: CostInputs; scenarios: Scenario[] };

export const report = (m: Measured, settings: BenchSettings) => {
  const f = figuresOf(m);
  const rows = resultRows(f, m, settings);
  const targets = targetsOf(f, m, settings);
  const cost = costOf(f, m, settings);
  const json = {
    settings: { ...settings, node: process.version, cores: cpus().length },
    seedMs: m.seedMs,
    scanPages: m.scanPages,
    bodyBytes: m.bodyBytes,
    gzipWireBytes: f.gzipBytes,
    results: Object.fromEntries(rows.map(({ name, ...figures }) => [name, figures])),
    memory: { liveGrowthBytes: f.live, rssGrowthBytes: m.rssGrowth },
    targets,
    cost,
    samples: m,
  };
  const text = [
    ...tableText(m, settings, rows),
    ...memoryText(f, m, settings),
    ...targetsText(targets, paged(m, settings)),
    ...costReportText(cost, m, settings),
  ];
  return { text: text.join('\n'), json, missed: targets.filter((t) => t.verdict === 'MISS').length };
};

/** Each measurement summarised: time (median, min, p95), CPU, bytes on the wire, live memory. */
const figuresOf = (m: Measured) => {
  const live = {
    scan: Math.max(...m.scan.liveMemoryGrowth),
    list: Math.max(...m.list.liveMemoryGrowth),
    slow: Math.max(...m.list.slowLiveMemoryGrowth),
  };
  return {
    scan: summary(m.scan.totalMs),
    list: summary(m.list.totalMs),
    gzip: summary(m.gzip.totalMs),
    stringIds: summary(m.stringIds.totalMs),
    stringIdsBytes: median(m.stringIds.wireBytes),
    ttfb: summary(m.list.ttfbMs),
    floor: summary(m.concurrent.floor),
    update: summary(m.concurrent.update),
    cancel: summary(m.concurrent.cancel),
    update1: summary(m.sequential.update),
    cancel1: summary(m.sequential.cancel),
    floor1: summary(m.sequential.floor),
    refused1: summary(m.sequential.refused),
    gzipBytes: median(m.gzip.wireBytes),
    cpu: { scan: median(m.scan.cpuMs), list: median(m.list.cpuMs), gzip: median(m.gzip.cpuMs) },
    live,
    // The worse of the two clients: a fast one shows the working set, a slow one whether the service buffers.
    listLive: Math.max(live.list, live.slow),
  };
};
type Figures = ReturnType<typeof figuresOf>;

/** With one Scan page per segment there is nothing to stream ahead of, and the page is the body. */
const paged = (m: Measured, settings: BenchSettings) => m.scanPages > settings.segments;

const resultRows = (f: Figures, m: Measured, settings: BenchSettings): Row[] => {
  const { scan, list, gzip, stringIds, ttfb, floor, update, cancel, floor1, refused1, update1, cancel1, cpu } = f;
  const c = settings.concurrency;
  return [
    { name: 'baseline_scan', what: `raw parallel Scan, ${settings.segments} segments`, ...scan, cpuMs: cpu.scan },
    { name: 'baseline_scan_first_page', what: 'raw Scan: first page back', ...summary(m.scan.ttfbMs) },
    {
      name: 'list_http',
      what: 'GET /orders, identity, whole body',
      ...list,
      cpuMs: cpu.list,
      vs: 'baseline_scan',
      ratio: list.medianMs / scan.medianMs,
    },
    {
      name: 'list_http_gzip',
      what: 'GET /orders, gzip, whole body',
      ...gzip,
      cpuMs: cpu.gzip,
      vs: 'baseline_scan',
      ratio: gzip.medianMs / scan.medianMs,
    },
    {
      name: 'list_http_string_ids',
      what: 'GET /orders?stringIds=true, identity',
      ...stringIds,
      vs: 'list_http',
      ratio: stringIds.medianMs / list.medianMs,
    },
    { name: 'list_ttfb', what: 'GET /orders: first body byte', ...ttfb, vs: 'list_http', ratio: ttfb.medianMs / list.medianMs },
    { name: 'gateway_floor_404', what: `404 route_not_found, c=${c}`, ...floor },
    { name: 'baseline_update', what: `raw conditional UpdateItem, c=${c}`, ...update },
    {
      name: 'cancel_http',
      what: `DELETE /orders/{id} → 204, c=${c}`,
      ...cancel,
      vs: 'baseline_update',
      ratio: cancel.medianMs / update.medianMs,
    },
    { name: 'gateway_floor_404_c1', what: '404 route_not_found, c=1', ...floor1 },
    { name: 'authorizer_401_c1', what: 'DELETE, unknown key → 401, c=1', ...refused1 },
    { name: 'baseline_update_c1', what: 'raw conditional UpdateItem, c=1', ...update1 },
    {
      name: 'cancel_http_c1',
      what: 'DELETE /orders/{id} → 204, c=1',
      ...cancel1,
      vs: 'baseline_update_c1',
      ratio: cancel1.medianMs / update1.medianMs,
    },
  ];
};

const targetsOf = (f: Figures, m: Measured, settings: BenchSettings): Target[] => {
  const { scan, list, gzip, ttfb, update, floor, cancel, live, listLive, gzipBytes } = f;
  const applies = paged(m, settings);
  const cancelBudget = 1.5 * update.medianMs + floor.medianMs;
  return [
    { target: 'list ≤ 2.0× raw scan (median)', value: list.medianMs / scan.medianMs, limit: 2.0, unit: '×' },
    { target: 'list with gzip ≤ 2.5× raw scan (median)', value: gzip.medianMs / scan.medianMs, limit: 2.5, unit: '×' },
    { target: 'gzip bytes on the wire ≤ 0.25× identity', value: gzipBytes / m.bodyBytes, limit: 0.25, unit: '×' },
    { target: 'first byte ≤ 0.5× list total (streams)', value: ttfb.medianMs / list.medianMs, limit: 0.5, unit: '×', applies },
    {
      // Bounded by the Scan pages in flight (segments × SCAN_PAGE_SIZE), not by the table: well
      // under what merely reading the table with the SDK's default 1 MB pages holds.
      target: 'list live memory growth ≤ 0.5× raw scan (worse client)',
      value: listLive / live.scan,
      limit: 0.5,
      unit: '×',
      applies,
    },
    {
      target: `cancel p50 ≤ 1.5× raw UpdateItem p50 + gateway floor p50 (c=${settings.concurrency})`,
      value: cancel.medianMs / cancelBudget,
      limit: 1.0,
      unit: '× budget',
      note: `${cancel.medianMs.toFixed(2)} ms vs ${cancelBudget.toFixed(2)} ms`,
    },
  ].map(({ applies = true, ...t }) => ({ ...t, verdict: !applies ? 'n/a' : t.value <= t.limit ? 'PASS' : 'MISS' }));
};

/** The cost model's inputs from this run, and its scenarios (./cost.ts). */
const costOf = (f: Figures, m: Measured, settings: BenchSettings): Cost => {
  // A function's own time: the request's, less the gateway floor's (client, routing) at c=1.
  const ownMs = (request: number) => Math.max(1, request - f.floor1.medianMs);
  const inputs = {
    cancel: { functionMs: ownMs(f.cancel1.medianMs), writeUnits: m.writeUnitsPerCancel },
    authorizer: { functionMs: ownMs(f.refused1.medianMs), readUnits: m.keyReadUnits },
    list: {
      orders: settings.orders,
      functionMs: f.list.medianMs,
      gzipFunctionMs: f.gzip.medianMs,
      readUnits: m.scanReadUnits,
      bodyBytes: m.bodyBytes,
      gzipBytes: f.gzipBytes,
    },
  };
  return { inputs, scenarios: costScenarios(inputs) };
};

const ms = (value: number) => value.toFixed(value < 10 ? 2 : 0);
const mb = (bytes: number) => (Math.abs(bytes) < 1024 * 1024 ? `${Math.round(bytes / 1024)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`);
const pad = (text: string, width: number) => text.padEnd(width);

const tableText = (m: Measured, settings: BenchSettings, rows: Row[]) => [
  '',
  `Store Orders Service benchmark: ${settings.orders} orders (${m.scanPages} Scan pages), ${settings.segments} scan segments,` +
    ` ${settings.reps} rounds after a warm-up; ${settings.cancels} cancels at c=${settings.concurrency}, ${settings.cancelsSequential} at c=1;`,
  `node ${process.version}, ${cpus().length} cores; seeding took ${(m.seedMs / 1000).toFixed(1)} s. cpu ms = this process (gateway, handlers, client), not DynamoDB Local.`,
  '',
  `${pad('name', 26)}${pad('what', 40)}${'median ms'.padStart(10)}${'min ms'.padStart(9)}${'p95 ms'.padStart(9)}${'cpu ms'.padStart(8)}   ratio`,
  '-'.repeat(124),
  ...rows.map(
    (r) =>
      `${pad(r.name, 26)}${pad(r.what, 40)}${ms(r.medianMs).padStart(10)}${ms(r.minMs).padStart(9)}${ms(r.p95Ms).padStart(9)}` +
      `${(r.cpuMs === undefined ? '' : ms(r.cpuMs)).padStart(8)}   ${r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}× ${r.vs}`}`,
  ),
  '',
];

const memoryText = ({ gzipBytes, stringIdsBytes, live, listLive }: Figures, m: Measured, settings: BenchSettings) => {
  const ofBody = (bytes: number) => `${(bytes / m.bodyBytes).toFixed(2)}× body`;
  return [
    `body: ${mb(m.bodyBytes)} identity, ${mb(gzipBytes)} gzip on the wire (${(gzipBytes / m.bodyBytes).toFixed(3)}×)`,
    `bytes per order: ${(m.bodyBytes / settings.orders).toFixed(1)} identity, ${(stringIdsBytes / settings.orders).toFixed(1)} with stringIds=true ` +
      `(${(stringIdsBytes / m.bodyBytes).toFixed(3)}×)`,
    `memory growth, V8 heap + external buffers, peak of ${settings.memoryRuns} runs sampled every ${settings.sampleEveryMs} ms with a full GC before each sample:`,
    `  list_http                              ${mb(live.list).padStart(9)} = ${ofBody(live.list)}`,
    `  list_http, client reading for ${(settings.slowReadMs / 1000).toFixed(0)} s     ${mb(live.slow).padStart(9)} = ${ofBody(live.slow)}` +
      ` (took ${Math.round(median(m.list.slowTotalMs))} ms)`,
    `  baseline_scan (the raw SDK's own)      ${mb(live.scan).padStart(9)} = ${ofBody(live.scan)}`,
    `  list above the raw scan (worse client) ${mb(listLive - live.scan).padStart(9)} = ${ofBody(listLive - live.scan)}`,
    `  without the GC per sample (garbage included): list ${mb(Math.max(...m.list.memoryGrowth))}, raw scan ${mb(Math.max(...m.scan.memoryGrowth))};` +
      ` RSS growth during a list ${mb(m.rssGrowth)}`,
    '',
  ];
};

const targetsText = (targets: Target[], applies: boolean) => [
  'targets:',
  ...targets.map(
    (t) => `  ${t.verdict.padEnd(4)}  ${pad(t.target, 66)} ${t.value.toFixed(2)} ${t.unit}${'note' in t ? `  (${t.note})` : ''}`,
  ),
  ...(applies ? [] : ['  (n/a: each segment fits in one Scan page at this size; use more orders)']),
  '',
];

const costReportText = ({ inputs, scenarios }: Cost, m: Measured, settings: BenchSettings) => [
  `cost on AWS at the stack's memory sizes and AWS list prices (us-east-1, no free tier; test/perf/cost.ts), from this run's`,
  `durations (cancel ${inputs.cancel.functionMs.toFixed(1)} ms, authorizer ${inputs.authorizer.functionMs.toFixed(1)} ms: request less the gateway floor at c=1;` +
    ` list: the whole body) and DynamoDB's units (${m.writeUnitsPerCancel} WRU a cancel, ${m.keyReadUnits} RRU a key read, ${m.scanReadUnits} RRU a Scan of ${settings.orders} orders):`,
  ...costText(scenarios),
  '',
];
