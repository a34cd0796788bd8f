/**
 * `npm run smoke -- --base-url <url>`: the known-answer suite of every function of the registry
 * (shared/known-answers.ts; the checks are each function's `known-answers.ts`, run over HTTP by
 * functions/canary/smoke-check.ts, as the synthetic client runs them) against a running stage. The
 * key comes from STORE_API_KEY. Against `npm start` it finds the local orders table through npm
 * start's state (as `npm run keys` does) and writes orders of its own there, in the reserved probe
 * ids, which its cancel checks cancel, read back and delete. Against a deployed stage it writes
 * nothing but the order `--cancel` names: a stage grants its probe orders to its probes' roles only,
 * so those checks are SKIP there (`npm run probes -- --stage <stage>` runs them). One line per check
 * (PASS, FAIL, BUSY, SKIP or SETUP), a summary, exit code 1 on any FAIL or SETUP (2 on a usage error).
 */
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { parseArgs } from 'node:util';
import { parseOrderId } from '../../functions/cancel-order/order-id.ts';
import { type SmokeOptions, smoke } from '../../functions/canary/smoke-check.ts';
import { probeListReadCapBytes, probeSlots } from '../../shared/probes.ts';
import { localStateFile, readLocalState } from '../local/local-state.ts';
import { loadSuites } from '../registry.ts';
import { type StageName, stages } from '../stage-config.ts';

const usage = `Usage: npm run smoke -- --base-url <url> [--stage <stage>] [--cancel <orderId>] [--timeout-ms <ms>] [--list-bytes <n>]
  with the key in STORE_API_KEY (read it without echo: read -rs STORE_API_KEY && export STORE_API_KEY)

  --base-url <url>     the stage's base URL, ending in /v1 (the stack output BaseUrl); https://, or
                       http:// only to this machine (localhost, 127.0.0.0/8, [::1]). Against npm start
                       (found through its state file) it also cancels orders of its own
  --stage <stage>      the deployed stage it checks (staging or production): a filtered v2 page is
                       asked for only where that stage's config has statusFilterChecks (its status
                       index is ACTIVE); without --stage (npm start) it is always asked for
  --cancel <orderId>   also cancel this order (it must be pending or cancelled)
  --timeout-ms <ms>    the most any one request may take (default 10000)
  --list-bytes <n>     read about n bytes of each v1 list (up to the end of the chunk that reaches
                       n) and check the orders in them (default: all of it from npm start, about
                       2.3 MB from a deployed stage)`;

export class UsageError extends Error {}

/**
 * Plain http:// would send the key in clear to every network hop, so it is accepted only for a
 * server on this machine (npm start). The hostname is checked as written: `localhost`, an IPv4
 * loopback address or `[::1]`.
 */
const isLoopback = (url: URL) => url.hostname === 'localhost' || url.hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(url.hostname);

/** The base URL, checked: http(s), ending in /v1, and http:// only to this machine. */
const readBaseUrl = (baseUrl: string | undefined): string => {
  if (baseUrl === undefined) throw new UsageError('--base-url is required');
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol))
    throw new UsageError(
      `--base-url must be an http(s) URL such as https://abc123.execute-api.eu-west-1.amazonaws.com/production/v1; got "${baseUrl}"`,
    );
  if (new URL(baseUrl).protocol === 'http:' && !isLoopback(new URL(baseUrl)))
    throw new UsageError(
      `--base-url may use http:// only for this machine (localhost, 127.0.0.1, [::1]): the key would cross the network in clear; use https://. Got "${baseUrl}"`,
    );
  const trimmed = baseUrl.replace(/\/+$/, '');
  if (!trimmed.endsWith('/v1')) throw new UsageError(`--base-url must end in /v1 (the stack output BaseUrl); got "${baseUrl}"`);
  return trimmed;
};

/** A positive whole number, or a usage error naming the option. */
const positive = (name: string, text: string): number => {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`--${name} must be a positive whole number; got "${text}"`);
  return value;
};

/** Whether to ask for a filtered v2 page: the stage's statusFilterChecks, or yes without --stage. */
const readStatusFilter = (stage: string | undefined): boolean => {
  if (stage === undefined) return true;
  if (!Object.hasOwn(stages, stage)) throw new UsageError(`--stage must be one of ${Object.keys(stages).join(', ')}; got "${stage}"`);
  return stages[stage as StageName].statusFilterChecks;
};

const readCancel = (text: string): string => {
  try {
    return parseOrderId(text);
  } catch {
    throw new UsageError(`--cancel must be an order id (a base-10 int64); got "${text}"`);
  }
};

/** Why a deployed stage's smoke check writes no order of its own. */
const stageWritesNone =
  "a deployed stage grants its probe orders to its probes' roles only (the pre-traffic hook, the synthetic client): `npm run probes -- --stage <stage>` runs these checks there";

/**
 * Against npm start, its orders table (through the state it records, as `npm run keys` reads it) and
 * orders of its own there; else why it writes none. The state must describe the server the URL names.
 */
const localProbeOrders = (baseUrl: string, env: NodeJS.ProcessEnv): Pick<SmokeOptions, 'probeOrders' | 'noOrders' | 'itemCount'> => {
  const url = new URL(baseUrl);
  if (!isLoopback(url)) return { noOrders: stageWritesNone };
  const file = localStateFile(env);
  const state = readLocalState(file);
  if (state === undefined || new URL(state.apiUrl).port !== url.port)
    return { noOrders: `no running npm start serves ${baseUrl} (its state file: ${file}), so its orders table is unknown` };
  const client = new DynamoDBClient({
    endpoint: state.dynamoDbEndpoint,
    region: 'us-east-1',
    ...(state.dynamoDbCredentials === undefined ? {} : { credentials: state.dynamoDbCredentials }),
  });
  const probeOrders = {
    client,
    tableName: state.ordersTable,
    by: 'npm run smoke',
    // Locally nothing else writes probe orders: the hooks' slots serve it.
    slots: probeSlots.preTrafficHook,
    lifetimeSeconds: 120,
    signal: () => AbortSignal.timeout(10_000),
  };
  const itemCount = async () => (await client.send(new DescribeTableCommand({ TableName: state.ordersTable }))).Table?.ItemCount ?? 0;
  return { probeOrders, itemCount };
};

/**
 * How much of each v1 list to read: `--list-bytes`, else, against a deployed stage, what a probe's
 * list may hold (shared/probes.ts): a production store is never read whole by a smoke check.
 */
const listRead = (baseUrl: string, text: string | undefined): Pick<SmokeOptions, 'listBytes'> => {
  if (text !== undefined) return { listBytes: positive('list-bytes', text) };
  return isLoopback(new URL(baseUrl)) ? {} : { listBytes: probeListReadCapBytes };
};

/** The smoke check's options from the command line, STORE_API_KEY and npm start's state, or a UsageError. */
export const readSmokeOptions = (argv: string[], env: NodeJS.ProcessEnv): SmokeOptions => {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      cancel: { type: 'string' },
      'timeout-ms': { type: 'string' },
      'list-bytes': { type: 'string' },
      stage: { type: 'string' },
    },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const baseUrl = readBaseUrl(values['base-url']);
  const key = env.STORE_API_KEY;
  if (key === undefined || key === '') throw new UsageError('STORE_API_KEY must hold the API key to call the stage with');
  return {
    baseUrl,
    key,
    timeoutMs: positive('timeout-ms', values['timeout-ms'] ?? '10000'),
    statusFilter: readStatusFilter(values.stage),
    ...(values.cancel === undefined ? {} : { cancel: readCancel(values.cancel) }),
    ...listRead(baseUrl, values['list-bytes']),
    ...localProbeOrders(baseUrl, env),
  };
};

/** The command: its exit code is 0 when no check failed or went unset, 1 when one did, 2 on a usage error. */
const main = async (argv: string[], env: NodeJS.ProcessEnv): Promise<number> => {
  let options: SmokeOptions;
  try {
    options = readSmokeOptions(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof TypeError)) throw error;
    console.log(`smoke: ${error.message}\n\n${usage}`);
    return 2;
  }
  // A busy check (a documented refusal until its time ran out) or a skipped one is reported, but fails nothing.
  const { failed, setup } = await smoke(options, await loadSuites());
  options.probeOrders?.client.destroy();
  return failed + setup === 0 ? 0 : 1;
};

void main(process.argv.slice(2), process.env).then((code) => (process.exitCode = code));
