/**
 * One read of the v1 list in a process of its own, so that its memory is its own: the bench's
 * memory figures (bench-client.ts) come from here. `node test/perf/list-reader.ts client|parse <baseUrl>`
 * with the key in BENCH_API_KEY: `client` iterates `listOrders()` (ids exact, nothing kept),
 * `parse` does `fetch`, then `JSON.parse` of the whole text (the list held until counted). Run with
 * --expose-gc. Prints one JSON line: the orders read, the read's time (slowed by the sampler's GCs:
 * the bench times the readers elsewhere), its peak live memory growth and its peak RSS growth.
 */
import { StoreOrdersClient } from '../../client/src/index.ts';

const [mode, baseUrl] = process.argv.slice(2);
const apiKey = process.env.BENCH_API_KEY;
if ((mode !== 'client' && mode !== 'parse') || baseUrl === undefined || !apiKey)
  throw new Error('usage: BENCH_API_KEY=<key> node test/perf/list-reader.ts client|parse <baseUrl>');

/** What the process holds for JS: V8 heap, plus memory outside it (Buffers, the response's chunks). */
const jsMemory = () => {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
};

const viaClient = async () => {
  const client = new StoreOrdersClient({ baseUrl, apiKey });
  let count = 0;
  for await (const order of client.listOrders()) if (typeof order.id === 'bigint') count++;
  return count;
};

// Holds the parsed list until it is counted, as a client that uses it would.
const viaParse = async () => {
  const response = await fetch(`${baseUrl}/store/orders`, { headers: { Authorization: `Bearer ${apiKey}` } });
  if (response.status !== 200) throw new Error(`GET orders answered ${response.status}`);
  const list = JSON.parse(await response.text()) as unknown[];
  await new Promise((resolve) => setTimeout(resolve, 40)); // a sample or two while the list is held
  return list.length;
};

const fail = (message: string): never => {
  throw new Error(message);
};

// Loading fetch (undici) and its first connection cost the same to both readers, and are not the read's.
await (await fetch(`${baseUrl}/store/orders/0`, { headers: { Authorization: `Bearer ${apiKey}` } })).arrayBuffer();

// Live memory: a full GC before the start and before each sample (every 20 ms), so only what the
// read really holds counts (the process is started with --expose-gc). The peak resident set
// (getrusage's maxRSS, in KiB) sees what no sampler can, the inside of one synchronous JSON.parse,
// and also garbage not yet collected and the heap V8 keeps for it.
const gc = (globalThis as { gc?: () => void }).gc ?? fail('start the reader with --expose-gc');
gc();
const rssBefore = process.memoryUsage.rss();
const maxRssBefore = process.resourceUsage().maxRSS * 1024;
const liveBefore = jsMemory();
let livePeak = liveBefore;
const sample = () => {
  gc();
  livePeak = Math.max(livePeak, jsMemory());
};
const sampler = setInterval(sample, 20);
const started = performance.now();
const orders = await (mode === 'client' ? viaClient() : viaParse());
const ms = performance.now() - started;
clearInterval(sampler);
sample();
const maxRssAfter = process.resourceUsage().maxRSS * 1024;
console.log(
  JSON.stringify({
    mode,
    orders,
    ms,
    liveGrowth: livePeak - liveBefore,
    // When the read never passed the start-up's high-water mark, this is an upper bound of its growth.
    rssGrowth: maxRssAfter - rssBefore,
    rssPeakWasStartup: maxRssAfter === maxRssBefore,
  }),
);
