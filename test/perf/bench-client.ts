/**
 * The client package's list (`listOrders()`, streamed and parsed with exact ids) beside what a
 * client without it does with the same response: `fetch`, then `JSON.parse` of the whole text
 * (which rounds ids above 2^53). Both through the same local gateway, alternating, so drift hits
 * both alike. Also the parsers alone on the same text held in memory (no service, no network):
 * the client's streaming parser in 64 KiB chunks against `JSON.parse`.
 */
import { JsonArrayStream, StoreOrdersClient } from '../../client/src/index.ts';
import { median } from './bench-report.ts';

/** What the process holds for JS: V8 heap plus Buffers outside it (response chunks). */
const jsMemory = () => {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
};

/**
 * Peak live memory growth while `task` runs: a full GC before the start and before each sample
 * (every 20 ms), so only what is really held counts. A synchronous peak (inside one JSON.parse)
 * can be missed; what a read holds across awaits (chunks, parsed orders) cannot.
 */
const liveGrowth = async (task: () => Promise<unknown>, gc: () => void): Promise<number> => {
  gc();
  const start = jsMemory();
  let peak = start;
  const timer = setInterval(() => {
    gc();
    peak = Math.max(peak, jsMemory());
  }, 20);
  try {
    await task();
    gc();
    return Math.max(peak, jsMemory()) - start;
  } finally {
    clearInterval(timer);
  }
};

/** Targets: the time ratio of the issue, and peak memory growth under a tenth of the response. */
export const clientTargets = { timeRatio: 1.3, memoryShareOfBody: 0.1 };

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
  gc: () => void;
  log: (message: string) => void;
}) => {
  const { baseUrl, apiKey, gc } = options;
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
  // Live memory (a full GC before each sample): what each really holds at its peak.
  const parseLive = await liveGrowth(viaParse, gc);
  const clientLive = await liveGrowth(viaClient, gc);
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
  return { bodyBytes, parseMs, clientMs, parseLive, clientLive, parserMs };
};

export type ClientBench = Awaited<ReturnType<typeof benchClient>>;

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const ms = (values: number[]) => `${Math.round(median(values))} ms`;

/** The lines of the report and its targets. */
export const clientReport = (b: ClientBench, orders: number) => {
  const timeRatio = median(b.clientMs) / median(b.parseMs);
  const memoryShare = b.clientLive / b.bodyBytes;
  const targets = [
    { name: 'client list time / fetch + JSON.parse', value: timeRatio, target: clientTargets.timeRatio },
    { name: 'client list peak live memory / response size', value: memoryShare, target: clientTargets.memoryShareOfBody },
  ].map((t) => ({ ...t, verdict: t.value <= t.target ? 'ok' : 'MISS' }));
  const text = [
    '',
    `Client package (@store-orders/client), ${orders} orders, response ${mb(b.bodyBytes)} (medians):`,
    `  fetch + JSON.parse (ids rounded)   ${ms(b.parseMs)}   peak live memory growth ${mb(b.parseLive)}`,
    `  client.listOrders() (ids exact)    ${ms(b.clientMs)}   peak live memory growth ${mb(b.clientLive)}`,
    `  parsers alone on the same text: JSON.parse ${ms(b.parserMs.jsonParse)}, client's streaming parser ${ms(b.parserMs.stream)}`,
    ...targets.map((t) => `  ${t.verdict === 'ok' ? 'ok  ' : 'MISS'} ${t.name}: ${t.value.toFixed(2)} (target ≤ ${t.target})`),
  ];
  return {
    text: text.join('\n'),
    json: { ...b, timeRatio, memoryShare, targets },
    missed: targets.filter((t) => t.verdict === 'MISS').length,
  };
};
