/** How the bench measures: time, CPU and memory of a task, and its HTTP requests (node:http). */
import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { settings } from './bench-settings.ts';

// A full GC before each measured request gives memory samples a clean starting point.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

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
export const measure = async <T>(task: () => Promise<T>, live = false) => {
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

export const agent = new Agent({ keepAlive: true, maxSockets: 16 });

export type Reply = { status: number; headers: IncomingHttpHeaders; wireBytes: number; ttfbMs: number; totalMs: number; body?: Buffer };

/**
 * One request; the body is counted and dropped unless `keepBody` (a kept 10 MB body would skew
 * the memory figures). `bytesPerSecond` reads like a slow client: pausing the response stops
 * reading the socket, so a server that honours backpressure waits instead of buffering.
 */
export const send = (
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

export const expectStatus = (reply: Reply, status: number, what: string) => {
  if (reply.status !== status) throw new Error(`${what}: expected HTTP ${status}, got ${reply.status} ${reply.body?.toString() ?? ''}`);
};

/** Runs `task` over `items` with `concurrency` workers; returns each call's latency in ms. */
export const latencies = async <T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<void>): Promise<number[]> => {
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
