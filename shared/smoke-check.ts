/**
 * The black-box checks of a running stage: what `npm run smoke` (infra/ops/smoke.ts) runs from a
 * shell, the Synthetics canary (functions/canary.ts) every minute, and the pre-traffic hook
 * (functions/pre-traffic-hook.ts) uses to judge a new version's answers. Read-only, unless
 * `--cancel <orderId>` names an order it may cancel. One line per check, a summary, exit code 1 on
 * any mismatch (2 on a usage error), and a timeout on every request.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { parseOrderId } from './order-id.ts';
import { integerPattern, orderSchema } from './schemas.ts';

const usage = `Usage: npm run smoke -- --base-url <url> [--cancel <orderId>] [--timeout-ms <ms>] [--list-bytes <n>]
  with the key in STORE_API_KEY (read it without echo: read -rs STORE_API_KEY && export STORE_API_KEY)

  --base-url <url>     the stage's base URL, ending in /v1 (the stack output BaseUrl); https://, or
                       http:// only to this machine (localhost, 127.0.0.0/8, [::1])
  --cancel <orderId>   also cancel this order (it must be pending or cancelled): the only write
  --timeout-ms <ms>    the most any one request may take (default 10000)
  --list-bytes <n>     read at most n bytes of each list and check the orders in them (default: all)`;

class UsageError extends Error {}

/**
 * Plain http:// would send the key in clear to every network hop, so it is accepted only for a
 * server on this machine (npm start). The hostname is checked as written: `localhost`, an IPv4
 * loopback address or `[::1]`.
 */
const isLoopback = (url: URL) => url.hostname === 'localhost' || url.hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(url.hostname);

/** An id no store issues: int64's minimum. Cancelling it must answer 404 order_not_found. */
const idThatCannotExist = '-9223372036854775808';

/** An HTTP answer as a client sees it; the pre-traffic hook builds one from a function's own answer. */
export type Answer = { status: number; headers: Headers; body: string; firstByteMs: number; cut?: boolean };
type Check = { name: string; run: () => Promise<string> };
type Options = { baseUrl: string; key: string; cancel?: string; timeoutMs: number; listBytes?: number };

/**
 * One request with a deadline; the time to its first body byte is measured as the client sees it.
 * With `maxBytes`, reading stops (and the request is abandoned) once that much of the body arrived.
 */
const callOnce = async (
  options: Options,
  method: string,
  path: string,
  headers: Record<string, string>,
  maxBytes = Infinity,
): Promise<Answer> => {
  const started = performance.now();
  const response = await fetch(`${options.baseUrl}${path}`, { method, headers, signal: AbortSignal.timeout(options.timeoutMs) });
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let firstByteMs = performance.now() - started;
  let received = 0;
  let cut = false;
  for (let first = true; reader !== undefined; first = false) {
    const { done, value } = await reader.read();
    if (first) firstByteMs = performance.now() - started;
    if (done) break;
    chunks.push(value);
    received += value.byteLength;
    if (received >= maxBytes) {
      cut = true;
      await reader.cancel();
      break;
    }
  }
  const body = Buffer.concat(chunks).toString('utf8');
  return { status: response.status, headers: response.headers, body, firstByteMs, ...(cut ? { cut } : {}) };
};

/**
 * A request that honours the key's limits: a 429 is its tier at work (a standard key may list
 * once every two seconds), not a fault, so the check waits as told (up to 5 s) and asks again,
 * at most twice. Any other answer, or a longer wait, is returned as it is.
 */
const call = async (
  options: Options,
  method: string,
  path: string,
  headers: Record<string, string>,
  maxBytes?: number,
): Promise<Answer> => {
  for (let attempt = 1; ; attempt++) {
    const answer = await callOnce(options, method, path, headers, maxBytes);
    const waitSeconds = Number(answer.headers.get('retry-after'));
    if (answer.status !== 429 || attempt === 3 || !(waitSeconds >= 0 && waitSeconds <= 5)) return answer;
    await new Promise((resolve) => setTimeout(resolve, waitSeconds * 1000 + 100));
  }
};

export const fail = (message: string): never => {
  throw new Error(message);
};

/** The answer's X-Request-Id (every answer carries one), or a failure. */
const requestIdOf = (answer: Answer) => answer.headers.get('x-request-id') || fail('no X-Request-Id header');

/** Whether JSON.parse hands a reviver each value's source text (Node.js 22 and later; not 20). */
const sourceTextAccess = JSON.parse('1', (_key, value: unknown, context?: { source?: string }) => context?.source === '1' || value);

/** JSON with every integer kept as its exact text, so int64 ids are checked digit for digit. */
const parseExact = (text: string): unknown =>
  JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined && integerPattern.test(context.source) ? context.source : value,
  );

const errorRecord = z.strictObject({ code: z.string(), message: z.string(), status: z.number() });

/** The answer is the Error record `code` with status `status`, or a failure. */
export const expectError = (answer: Answer, status: number, code: string) => {
  if (answer.status !== status) fail(`expected ${status} ${code}, got ${answer.status}: ${answer.body.slice(0, 200)}`);
  let record: unknown;
  try {
    record = JSON.parse(answer.body);
  } catch {
    fail(`expected an Error record, got ${answer.body.slice(0, 200)}`);
  }
  const parsed = errorRecord.safeParse(record);
  if (!parsed.success || parsed.data.code !== code || parsed.data.status !== status)
    fail(`expected the Error record {code: ${code}, status: ${status}}, got ${answer.body.slice(0, 200)}`);
  return `${status} ${code}, X-Request-Id ${requestIdOf(answer)}`;
};

/** The list answers 200 with a JSON array of valid orders. */
const checkList = async (options: Options, encoding: 'identity' | 'gzip') => {
  const headers = { Authorization: `Bearer ${options.key}`, 'Accept-Encoding': encoding };
  const answer = await call(options, 'GET', '/store/orders', headers, options.listBytes);
  if (encoding === 'gzip' && answer.status === 200 && answer.headers.get('content-encoding') !== 'gzip')
    fail('asked for gzip, got no Content-Encoding: gzip');
  const list = listedOrders(answer.cut ? { ...answer, body: completeOrdersOf(answer.body) } : answer);
  const what = answer.cut ? `the first ${list.length} orders (reading stopped after ${options.listBytes} bytes)` : `${list.length} orders`;
  return `200, ${what}, first byte after ${Math.round(answer.firstByteMs)} ms, X-Request-Id ${requestIdOf(answer)}`;
};

/**
 * The start of a list cut short, closed after its last complete order: `[{…},{…},{…` → `[{…},{…}]`.
 * Orders are flat objects, so an order ends where a `}` outside a string brings the depth back to 1.
 */
export const completeOrdersOf = (prefix: string): string => {
  if (!prefix.startsWith('[')) fail(`expected a JSON array, got ${prefix.slice(0, 200)}`);
  let depth = 0;
  let inString = false;
  let end = 1;
  for (let i = 0; i < prefix.length; i++) {
    const char = prefix[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '[' || char === '{') depth++;
    else if (char === ']' || char === '}') {
      depth--;
      if (depth === 1) end = i + 1;
    }
  }
  return `${prefix.slice(0, end)}]`;
};

/** The orders of a list answer: status 200 and a JSON array of valid Orders (ids kept exact), or a failure. */
export const listedOrders = (answer: Answer): unknown[] => {
  if (answer.status !== 200) fail(`expected 200, got ${answer.status}: ${answer.body.slice(0, 200)}`);
  // Without it ids above 2^53 would be rounded and every such order reported invalid: say why instead.
  if (sourceTextAccess !== true)
    fail(`Node.js ${process.versions.node} cannot read JSON integers exactly (JSON.parse source text access needs Node.js 22 or later)`);
  let orders: unknown;
  try {
    orders = parseExact(answer.body);
  } catch {
    fail(`expected a JSON array, got ${answer.body.slice(0, 200)}`);
  }
  if (!Array.isArray(orders)) fail(`expected a JSON array, got ${answer.body.slice(0, 200)}`);
  const list = orders as unknown[];
  const invalid = list.findIndex((entry) => !orderSchema.safeParse(entry).success);
  if (invalid >= 0) fail(`order ${invalid} is not a valid Order: ${JSON.stringify(list[invalid]).slice(0, 200)}`);
  return list;
};

const checks = (options: Options): Check[] => {
  const auth = { Authorization: `Bearer ${options.key}` };
  return [
    { name: 'list', run: () => checkList(options, 'identity') },
    { name: 'list with gzip', run: () => checkList(options, 'gzip') },
    {
      name: 'wrong key',
      run: async () => {
        const answer = await call(options, 'GET', '/store/orders', { Authorization: 'Bearer smoke-test-key-that-is-not-valid' });
        if (answer.headers.get('www-authenticate') !== 'Bearer') fail('401 without WWW-Authenticate: Bearer');
        return expectError(answer, 401, 'unauthorized');
      },
    },
    {
      name: 'unknown route',
      run: async () => expectError(await call(options, 'GET', '/smoke/no-such-route', auth), 404, 'route_not_found'),
    },
    {
      name: 'cancel an id that cannot exist',
      run: async () => expectError(await call(options, 'DELETE', `/store/orders/${idThatCannotExist}`, auth), 404, 'order_not_found'),
    },
    ...(options.cancel === undefined
      ? []
      : [
          {
            name: `cancel order ${options.cancel}`,
            run: async () => {
              const answer = await call(options, 'DELETE', `/store/orders/${options.cancel}`, auth);
              if (answer.status !== 204) fail(`expected 204, got ${answer.status}: ${answer.body.slice(0, 200)}`);
              return `204, X-Request-Id ${requestIdOf(answer)}`;
            },
          },
        ]),
  ];
};

const readOptions = (argv: string[], env: NodeJS.ProcessEnv): Options => {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      cancel: { type: 'string' },
      'timeout-ms': { type: 'string' },
      'list-bytes': { type: 'string' },
    },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const baseUrl = values['base-url'];
  if (baseUrl === undefined) throw new UsageError('--base-url is required');
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol))
    throw new UsageError(
      `--base-url must be an http(s) URL such as https://abc123.execute-api.eu-west-1.amazonaws.com/production/v1; got "${baseUrl}"`,
    );
  if (new URL(baseUrl).protocol === 'http:' && !isLoopback(new URL(baseUrl)))
    throw new UsageError(
      `--base-url may use http:// only for this machine (localhost, 127.0.0.1, [::1]): the key would cross the network in clear; use https://. Got "${baseUrl}"`,
    );
  const key = env.STORE_API_KEY;
  if (key === undefined || key === '') throw new UsageError('STORE_API_KEY must hold the API key to call the stage with');
  const timeoutMs = Number(values['timeout-ms'] ?? '10000');
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new UsageError(`--timeout-ms must be a positive whole number; got "${values['timeout-ms']}"`);
  const listBytes = values['list-bytes'] === undefined ? undefined : Number(values['list-bytes']);
  if (listBytes !== undefined && !(Number.isInteger(listBytes) && listBytes >= 1))
    throw new UsageError(`--list-bytes must be a positive whole number; got "${values['list-bytes']}"`);
  let cancel: string | undefined;
  if (values.cancel !== undefined) {
    try {
      cancel = parseOrderId(values.cancel);
    } catch {
      throw new UsageError(`--cancel must be an order id (a base-10 int64); got "${values.cancel}"`);
    }
  }
  return {
    baseUrl: baseUrl.replace(/\/+$/, ''),
    key,
    timeoutMs,
    ...(cancel === undefined ? {} : { cancel }),
    ...(listBytes === undefined ? {} : { listBytes }),
  };
};

/** Runs every check and prints one line each and a summary; resolves to the exit code. */
export const smoke = async (argv: string[], env: NodeJS.ProcessEnv = process.env, out: (line: string) => void = console.log) => {
  let options: Options;
  try {
    options = readOptions(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    out(`smoke: ${error.message}\n\n${usage}`);
    return 2;
  }
  out(`Smoke test of ${options.baseUrl} (${options.cancel === undefined ? 'read-only' : `may cancel order ${options.cancel}`})`);
  let failed = 0;
  const all = checks(options);
  for (const { name, run } of all) {
    try {
      out(`PASS  ${name}: ${await run()}`);
    } catch (error) {
      failed += 1;
      const reason =
        error instanceof Error
          ? error.name === 'TimeoutError'
            ? `no answer within ${options.timeoutMs} ms`
            : error.message
          : String(error);
      out(`FAIL  ${name}: ${reason}`);
    }
  }
  out(failed === 0 ? `All ${all.length} checks passed.` : `${failed} of ${all.length} checks FAILED.`);
  return failed === 0 ? 0 : 1;
};
