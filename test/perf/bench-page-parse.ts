/**
 * `npm run bench`, the client's v2 page parse: one page of 1000 orders as the service sends it
 * (its bytes, fetched from the bench's service), turned into orders by the client (decode, then
 * the page parser with ids exact) beside `JSON.parse` on the same bytes (decode, then JSON.parse,
 * ids rounded), in CPU time, alternating rounds so that drift hits both alike. Beside it, for
 * information, the same page with every id past 2^53.
 */
import { readPage } from '../../client/src/client.ts';
import type { CallMeta } from '../../client/src/index.ts';
import { median } from './bench-report.ts';

/** The target: the client's page at most this many times JSON.parse's CPU on the same bytes. */
export const pageParseTarget = 1.2;

const meta: CallMeta = { operation: 'listOrderPages', status: 200, requestId: undefined, attempts: 1, retryDelayMs: 0 };

/** CPU microseconds per call of `task`, over `calls` calls. */
const cpuPerCall = (task: () => unknown, calls: number): number => {
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) task();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
};

/** Median CPU per call of JSON.parse and of the client on `bytes`, in alternating rounds of 200 calls each, after a warm-up. */
const compare = (bytes: Uint8Array, rounds: number) => {
  const decoder = new TextDecoder();
  const viaJsonParse = () => (JSON.parse(decoder.decode(bytes)) as { orders: unknown[] }).orders.length;
  const viaClient = () => readPage(decoder.decode(bytes), meta).orders.length;
  if (viaClient() !== viaJsonParse()) throw new Error('the client and JSON.parse read a different number of orders');
  const jsonParseUs: number[] = [];
  const clientUs: number[] = [];
  cpuPerCall(viaJsonParse, 200);
  cpuPerCall(viaClient, 200);
  for (let round = 0; round < rounds; round++) {
    jsonParseUs.push(cpuPerCall(viaJsonParse, 200));
    clientUs.push(cpuPerCall(viaClient, 200));
  }
  return { bytes: bytes.length, orders: viaClient(), jsonParseUs, clientUs, ratio: median(clientUs) / median(jsonParseUs) };
};

/** The same page with every id and petId moved past 2^53 (2^62 + its value), where each needs its digits read as a bigint. */
const withLongIds = (bytes: Uint8Array) =>
  new TextEncoder().encode(
    new TextDecoder()
      .decode(bytes)
      .replace(/"(id|petId)":(\d+)/g, (_, key: string, digits: string) => `"${key}":${2n ** 62n + BigInt(digits)}`),
  );

export const benchPageParse = async (options: { v2Url: string; apiKey: string; rounds: number }) => {
  const response = await fetch(`${options.v2Url}/store/orders?pageSize=1000`, { headers: { Authorization: `Bearer ${options.apiKey}` } });
  if (response.status !== 200) throw new Error(`GET /v2/store/orders answered ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  return { ...compare(bytes, options.rounds), longIds: compare(withLongIds(bytes), options.rounds) };
};

export type PageParseBench = Awaited<ReturnType<typeof benchPageParse>>;

export const pageParseLines = (b: PageParseBench) => [
  `  v2 page parse, ${b.orders} orders (${(b.bytes / 1000).toFixed(0)} KB), CPU per page from the same bytes (medians of ${b.clientUs.length} rounds):`,
  `    JSON.parse ${median(b.jsonParseUs).toFixed(0)} µs (ids rounded), client ${median(b.clientUs).toFixed(0)} µs (ids exact)`,
  `    the same page with every id and petId past 2^53 (no target: each is a decimal-to-bigint conversion): JSON.parse ${median(b.longIds.jsonParseUs).toFixed(0)} µs, client ${median(b.longIds.clientUs).toFixed(0)} µs, ${b.longIds.ratio.toFixed(2)}×`,
];
