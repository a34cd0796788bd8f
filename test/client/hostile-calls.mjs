/* global process, console, performance */
/**
 * What test/client/package.test.ts runs in the project where the packed client is installed: the
 * client's calls against the hostile servers of test/lib/hostile-servers.ts, as a store's code
 * would make them (plain JavaScript, the package's name). One JSON line per call: how it ended.
 * `npm run bench` runs it on the client's source (CLIENT_MODULE=client/src/index.ts).
 *
 *   node hostile-calls.mjs <origin> <key> calls                  every hostile server once
 *   node hostile-calls.mjs <origin> <key> memory <kind> <bytes>  one bomb, both bounds at <bytes>
 *                                                               ("default": the defaults): the
 *                                                               process's peak RSS growth
 */
import { inspect } from 'node:util';

const { StoreOrdersClient, StoreOrdersError, clientUserAgent } = await import(process.env.CLIENT_MODULE ?? '@store-orders/client');

const [origin, key, mode, kind, limit] = process.argv.slice(2);
const clientOf = (name, options = {}) => new StoreOrdersClient({ baseUrl: `${origin}/${name}/v1`, apiKey: key, ...options });
const drain = async (items) => {
  const all = [];
  for await (const item of items) all.push(item);
  return all.length;
};

/** The call each server is met with. */
const calls = {
  'v2-gzip-bomb': (client) => client.collectOrders({ limit: 10 }),
  'v2-endless': (client) => drain(client.listOrderPages()),
  'v1-endless-order': (client) => drain(client.listOrders()),
  'v1-gzip-bomb': (client) => drain(client.listOrders()),
  silent: (client) => drain(client.listOrders()),
  'echo-text': (client) => client.cancelOrder(1n),
  'echo-record': (client) => client.cancelOrder(1n),
  'repeated-cursor': (client) => client.collectOrders({ limit: 10 }),
};

const outcome = async (name, options) => {
  const started = performance.now();
  try {
    await calls[name](clientOf(name, options));
    return { kind: name, resolved: true };
  } catch (error) {
    const everything = `${inspect(error, { depth: 10 })}${error.stack}${JSON.stringify(error)}`;
    return {
      kind: name,
      ms: Math.round(performance.now() - started),
      typed: error instanceof StoreOrdersError,
      name: error.name,
      code: error.code,
      limitBytes: error.limitBytes,
      keyInError: everything.includes(key),
    };
  }
};

// Undici and the package loaded, as in any process that made a call before.
await drain(clientOf('ok').listOrders());
await drain(clientOf('ok').listOrderPages());

if (mode === 'memory') {
  const bytes = Number(limit);
  const before = process.memoryUsage().rss;
  const result = await outcome(kind, limit === 'default' ? {} : { maxPageBytes: bytes, maxOrderBytes: bytes });
  // maxRSS is the process's peak since it started: its growth from `before` is at most this.
  const peak = process.resourceUsage().maxRSS * 1024;
  console.log(JSON.stringify({ ...result, rssGrowth: peak - before }));
} else {
  console.log(JSON.stringify({ userAgent: clientUserAgent }));
  for (const name of Object.keys(calls))
    console.log(JSON.stringify(await outcome(name, { idleTimeoutMs: 1000, retry: { maxAttempts: 1 } })));
}
