/**
 * The client package's list (`listOrders()`, streamed and parsed with exact ids) beside what a
 * client without it does with the same response: `fetch`, then `JSON.parse` of the whole text
 * (which rounds ids above 2^53). Both through the same local gateway, alternating, so drift hits
 * both alike. Also the parsers alone on the same text held in memory (no service, no network):
 * the client's streaming parser in 64 KiB chunks against `JSON.parse`. And the client's peak
 * memory against gzip bombs and bodies that never end (test/lib/hostile-servers.ts), each in a
 * process of its own, against the bound it was given.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { JsonArrayStream, StoreOrdersClient } from '../../client/src/index.ts';
import { type HostileKind, hostileServer } from '../lib/hostile-servers.ts';
import { median } from './bench-report.ts';
import { benchPageParse, pageParseLines, pageParseTarget } from './bench-page-parse.ts';

/** One read of the list in a child process of its own (list-reader.ts): its time and growth. */
type OwnProcessRead = { orders: number; ms: number; liveGrowth: number; rssGrowth: number; rssPeakWasStartup: boolean };

const run = promisify(execFile);
const reader = fileURLToPath(new URL('./list-reader.ts', import.meta.url));
const hostileCalls = fileURLToPath(new URL('../client/hostile-calls.mjs', import.meta.url));
const clientSource = fileURLToPath(new URL('../../client/src/index.ts', import.meta.url));

/** One hostile server met in a process of its own: the error, the bound it hit and the peak RSS growth. */
type HostileRead = { kind: HostileKind; bound: string; code: string; limitBytes: number; rssGrowth: number };
const bombs = ['v2-gzip-bomb', 'v2-endless', 'v1-endless-order', 'v1-gzip-bomb'] as const satisfies HostileKind[];
/** The bound the ratio target is measured at: large enough that the process's fixed costs do not count. */
const hostileBound = 32 * 1024 * 1024;

/** Each bomb at the client's defaults and at `hostileBound`, each read in a fresh process (test/client/hostile-calls.mjs on the source). */
const memoryAgainstHostileServers = async (): Promise<HostileRead[]> => {
  const hostile = await hostileServer();
  try {
    const reads: HostileRead[] = [];
    for (const kind of bombs)
      for (const bound of ['default', String(hostileBound)]) {
        const { stdout } = await run(process.execPath, [hostileCalls, hostile.origin, 'bench-key-0123456789', 'memory', kind, bound], {
          env: { ...process.env, CLIENT_MODULE: clientSource },
        });
        reads.push({ kind, bound, ...(JSON.parse(stdout.trim().split('\n').at(-1)!) as Omit<HostileRead, 'kind' | 'bound'>) });
      }
    return reads;
  } finally {
    hostile.close();
  }
};

const readInOwnProcess = async (mode: 'client' | 'parse', baseUrl: string, apiKey: string): Promise<OwnProcessRead> => {
  const args = ['--expose-gc', reader, mode, baseUrl];
  const { stdout } = await run(process.execPath, args, { env: { ...process.env, BENCH_API_KEY: apiKey } });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as OwnProcessRead;
};

/**
 * Peak memory growth, each read in a fresh process of its own (alternating, `reps` of each), so
 * that neither the service (in the bench's process) nor the other reader counts: live memory (a
 * full GC before each sample) and the process's peak RSS, which also sees the inside of one
 * synchronous JSON.parse and garbage not yet collected.
 */
const memoryInOwnProcesses = async (baseUrl: string, apiKey: string, reps: number, orders: number) => {
  const reads = { client: [] as OwnProcessRead[], parse: [] as OwnProcessRead[] };
  for (let rep = 1; rep <= reps; rep++)
    for (const mode of ['parse', 'client'] as const) {
      const read = await readInOwnProcess(mode, baseUrl, apiKey);
      if (read.orders !== orders) throw new Error(`${mode} in its own process read ${read.orders} orders, not ${orders}`);
      reads[mode].push(read);
    }
  return reads;
};

/**
 * Targets: the time ratio of the issue, peak live memory growth (own process) under a tenth of the
 * response, and peak RSS growth against a hostile server within a few times the bound it hit.
 */
export const clientTargets = { timeRatio: 1.3, memoryShareOfBody: 0.1, hostileRssPerBound: 4 };

const timed = async <T>(task: () => Promise<T>) => {
  const started = performance.now();
  const result = await task();
  return { result, ms: performance.now() - started };
};

export const benchClient = async (options: {
  baseUrl: string;
  apiKey: string;
  orders: number;
  reps: number;
  log: (message: string) => void;
}) => {
  const { baseUrl, apiKey } = options;
  const client = new StoreOrdersClient({ baseUrl, apiKey });
  const viaClient = async () => {
    let count = 0;
    for await (const order of client.listOrders()) if (typeof order.id === 'bigint') count++;
    return count;
  };
  const fetchText = async () => {
    const response = await fetch(`${baseUrl}/store/orders`, { headers: { Authorization: `Bearer ${apiKey}` } });
    if (response.status !== 200) throw new Error(`GET orders answered ${response.status}`);
    return response.text();
  };
  // Holds the parsed list until it is counted, as a client that uses it would.
  const viaParse = async () => (JSON.parse(await fetchText()) as unknown[]).length;
  // Warm-up, and both see every order.
  for (const [name, read] of [
    ['fetch + JSON.parse', viaParse],
    ['client', viaClient],
  ] as const) {
    const count = await read();
    if (count !== options.orders) throw new Error(`${name} read ${count} orders, not ${options.orders}`);
  }
  const bodyBytes = new TextEncoder().encode(await fetchText()).length;
  const parseMs: number[] = [];
  const clientMs: number[] = [];
  for (let rep = 1; rep <= options.reps; rep++) {
    options.log(`  client round ${rep}/${options.reps}`);
    parseMs.push((await timed(viaParse)).ms);
    clientMs.push((await timed(viaClient)).ms);
  }
  options.log(`  memory: ${options.reps} reads of each, every one in a process of its own (list-reader.ts)`);
  const own = await memoryInOwnProcesses(baseUrl, apiKey, options.reps, options.orders);
  // The parsers alone, on the text in memory.
  const bodyText = await fetchText();
  const parserMs = { jsonParse: [] as number[], stream: [] as number[] };
  const int64Keys = new Set(['id', 'petId']);
  for (let rep = 1; rep <= options.reps; rep++) {
    parserMs.jsonParse.push((await timed(async () => JSON.parse(bodyText) as unknown)).ms);
    parserMs.stream.push(
      (
        await timed(async () => {
          const stream = new JsonArrayStream(int64Keys);
          let count = 0;
          for (let at = 0; at < bodyText.length; at += 65_536) count += stream.push(bodyText.slice(at, at + 65_536)).length;
          stream.end();
          return count;
        })
      ).ms,
    );
  }
  options.log('  v2 page parse: the client beside JSON.parse on the same bytes (bench-page-parse.ts)');
  const pageParse = await benchPageParse({ v2Url: baseUrl.replace(/\/v1$/, '/v2'), apiKey, rounds: Math.max(10, options.reps * 4) });
  options.log('  hostile servers: each bomb in a process of its own, at the defaults and at a 32 MiB bound');
  const hostile = await memoryAgainstHostileServers();
  return { bodyBytes, parseMs, clientMs, own, parserMs, pageParse, hostile };
};

export type ClientBench = Awaited<ReturnType<typeof benchClient>>;

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const ms = (values: number[]) => `${Math.round(median(values))} ms`;

/** The lines of the report and its targets. */
export const clientReport = (b: ClientBench, orders: number) => {
  const timeRatio = median(b.clientMs) / median(b.parseMs);
  const grown = (reads: OwnProcessRead[]) => ({
    live: median(reads.map((read) => read.liveGrowth)),
    rss: median(reads.map((read) => read.rssGrowth)),
    // The growth is an upper bound when the process's start-up had already reached a higher peak.
    bound: reads.some((read) => read.rssPeakWasStartup) ? ' (at most: start-up peaked higher)' : '',
  });
  const client = grown(b.own.client);
  const parse = grown(b.own.parse);
  const memoryShare = client.live / b.bodyBytes;
  const atBound = b.hostile.filter((read) => read.bound !== 'default');
  const hostileRatio = Math.max(...atBound.map((read) => read.rssGrowth / read.limitBytes));
  const targets = [
    { name: 'client list time / fetch + JSON.parse', value: timeRatio, target: clientTargets.timeRatio },
    {
      name: 'client list peak live memory growth (own process) / response size',
      value: memoryShare,
      target: clientTargets.memoryShareOfBody,
    },
    { name: 'client v2 page parse CPU / JSON.parse on the same bytes', value: b.pageParse.ratio, target: pageParseTarget },
    {
      name: `client peak RSS growth against a bomb (worst of ${atBound.length}) / the bound it hit`,
      value: hostileRatio,
      target: clientTargets.hostileRssPerBound,
    },
  ].map((t) => ({ ...t, verdict: t.value <= t.target ? 'ok' : 'MISS' }));
  const text = [
    '',
    `Client package (@store-orders/client), ${orders} orders, response ${mb(b.bodyBytes)} (medians):`,
    `  fetch + JSON.parse (ids rounded)   ${ms(b.parseMs)}   own process: peak live growth ${mb(parse.live)}, peak RSS growth ${mb(parse.rss)}${parse.bound}`,
    `  client.listOrders() (ids exact)    ${ms(b.clientMs)}   own process: peak live growth ${mb(client.live)}, peak RSS growth ${mb(client.rss)}${client.bound}`,
    `  parsers alone on the same text: JSON.parse ${ms(b.parserMs.jsonParse)}, client's streaming parser ${ms(b.parserMs.stream)}`,
    ...pageParseLines(b.pageParse),
    '  against hostile servers (a ~1 MB gzip page or order expanding to 1 GiB, bodies that never end), own process:',
    ...b.hostile.map((read) => {
      const bound = `${mb(read.limitBytes)}${read.bound === 'default' ? ' (default)' : ''}`;
      const ratio = (read.rssGrowth / read.limitBytes).toFixed(1);
      return `    ${read.kind.padEnd(17)} bound ${bound.padEnd(18)} ${read.code}, peak RSS growth ${mb(read.rssGrowth)} (${ratio}× the bound)`;
    }),
    ...targets.map((t) => `  ${t.verdict === 'ok' ? 'ok  ' : 'MISS'} ${t.name}: ${t.value.toFixed(2)} (target ≤ ${t.target})`),
  ];
  return {
    text: text.join('\n'),
    json: { ...b, timeRatio, memoryShare, hostileRatio, memory: { client, parse }, targets },
    missed: targets.filter((t) => t.verdict === 'MISS').length,
  };
};
