/**
 * One read of the v1 list in a process of its own, so that its memory is its own: the bench's
 * memory figures (bench-client.ts) come from here. `node test/perf/list-reader.ts client|parse <baseUrl>`
 * with the key in BENCH_API_KEY: `client` iterates `listOrders()` (ids exact, nothing kept),
 * `parse` does `fetch`, then `JSON.parse` of the whole text (the list held until counted). Prints
 * one JSON line: the orders read, the read's time, and how far the process grew during it.
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

const viaParse = async () => {
  const response = await fetch(`${baseUrl}/store/orders`, { headers: { Authorization: `Bearer ${apiKey}` } });
  if (response.status !== 200) throw new Error(`GET orders answered ${response.status}`);
  return (JSON.parse(await response.text()) as unknown[]).length;
};

// The peak resident set (getrusage's maxRSS, in KiB) catches what a sampler cannot: the inside of
// one synchronous JSON.parse. The sampler (every 5 ms, no forced GC: garbage not yet collected
// counts, as it does in RSS) gives the JS side. Both are taken against the moment before the read.
const rssBefore = process.memoryUsage.rss();
const maxRssBefore = process.resourceUsage().maxRSS * 1024;
const jsBefore = jsMemory();
let jsPeak = jsBefore;
const sampler = setInterval(() => (jsPeak = Math.max(jsPeak, jsMemory())), 5);
const started = performance.now();
const orders = await (mode === 'client' ? viaClient() : viaParse());
const ms = performance.now() - started;
clearInterval(sampler);
jsPeak = Math.max(jsPeak, jsMemory());
const maxRssAfter = process.resourceUsage().maxRSS * 1024;
console.log(
  JSON.stringify({
    mode,
    orders,
    ms,
    // When the read never passed the start-up's high-water mark, this is an upper bound of its growth.
    rssGrowth: maxRssAfter - rssBefore,
    rssPeakWasStartup: maxRssAfter === maxRssBefore,
    jsGrowth: jsPeak - jsBefore,
  }),
);
