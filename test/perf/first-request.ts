/**
 * What a client sees of a cold start locally: `npm start` is started afresh (its own in-memory
 * DynamoDB Local and demo orders), and one operation's first request is timed against the same
 * request sent again once warm. Each operation gets fresh starts of its own, so its first request
 * pays everything a first request pays: the authorizer's first key lookup, the function's first
 * DynamoDB connection, and code running for the first time. `npm start` loads the handler
 * modules before it listens (as a Lambda's init phase does): module loading is not in these
 * figures; `test/perf/cold-start.ts` measures it. Run: `npx node test/perf/first-request.ts`.
 */
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { startServiceProcess, stopServiceProcess } from '../lib/service-process.ts';

const starts = Number(process.env.BENCH_FRESH_STARTS ?? 3);
const warmRequests = Number(process.env.BENCH_WARM_REQUESTS ?? 20);
const key = 'first-request-bench-key-0123456789';

/** Milliseconds from sending the request to the end of the answer's body. */
const timed = (url: string, method: string) =>
  new Promise<{ ms: number; status: number }>((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { method, headers: { Authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end();
  });

// Order 1 is a pending demo order: the first DELETE cancels it, the warm ones answer 204 again.
const operations = [
  { operation: 'listOrders', method: 'GET', path: '/store/orders' },
  { operation: 'cancelOrder', method: 'DELETE', path: '/store/orders/1' },
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const main = async () => {
  const lines = [
    `First request after a fresh \`npm start\` vs the same request warm (${starts} fresh starts per operation, ` +
      `${warmRequests} warm requests each; ${new Date().toISOString()}, load average ${loadavg()[0]!.toFixed(1)})`,
    '',
    `${'operation'.padEnd(40)}${'first ms'.padStart(10)}${'warm ms'.padStart(10)}`,
  ];
  for (const { operation, method, path } of operations) {
    const first: number[] = [];
    const warm: number[] = [];
    for (let run = 0; run < starts; run++) {
      process.stderr.write(`[first request] ${operation}: fresh start ${run + 1}/${starts}…\n`);
      const service = await startServiceProcess('node', { STORE_API_KEY: key });
      if (service.url === undefined) throw new Error(`npm start did not start:\n${service.output()}`);
      try {
        const answer = await timed(`${service.url}${path}`, method);
        if (answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status}`);
        first.push(answer.ms);
        for (let i = 0; i < warmRequests; i++) warm.push((await timed(`${service.url}${path}`, method)).ms);
      } finally {
        await stopServiceProcess(service);
      }
    }
    lines.push(
      `${`${operation} (${method} ${path})`.padEnd(40)}${median(first).toFixed(1).padStart(10)}${median(warm).toFixed(1).padStart(10)}`,
    );
  }
  console.log(lines.join('\n'));
};

await main();
