/**
 * The script of each stage's CloudWatch Synthetics canary (infra/cdk/release-checks.ts): every
 * minute, the known-answer suite of every function (collected by the registry into this bundle:
 * its entry exports `canaryHandler(suites)`) over HTTP against the stage's public URL
 * (./smoke-check.ts, the code `npm run smoke` runs), with the stage's canary key from Secrets
 * Manager and orders of its own (shared/probe-writes.ts) that it cancels through the API and deletes.
 *
 * A run fails, and Synthetics records SuccessPercent 0 (CanaryFailed, a guard of every deploy),
 * only when a check found a wrong answer or an error no document promises; the error names the
 * failed checks. A check the service kept refusing with a documented 429 or 503 is BUSY (ProbeBusy).
 * A canary that cannot run is not a failing release: its settings, its key or its own probe order
 * refused (IAM, throttling) make the checks concerned SETUP, the run passes, and CanarySetupFailed
 * counts them for an alarm of its own.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { readCanaryKey } from '../../shared/canary-key.ts';
import type { Suite } from '../../shared/known-answers.ts';
import { publishProbeRun } from '../../shared/probe-writes.ts';
import { canaryTimeoutSeconds, probeListReadCapBytes, probeSlots } from '../../shared/probes.ts';
import { smoke } from './smoke-check.ts';

const secrets = new SecretsManagerClient({});
const dynamodb = new DynamoDBClient({ maxAttempts: 3 });

/** The checks end this long before the timeout: the probe orders' deletion and the run's metrics still fit. */
const closingMs = 10_000;
/**
 * Each request may take this long: the suite's requests, and its probe orders' writes, stay inside
 * the run's 45 s when the service answers as it should; a busy wait never starts when it would end past them.
 */
const requestTimeoutMs = 4_000;

type Settings = { baseUrl: string; secretId: string; statusFilter: boolean; ordersTable: string };

/** The stack's settings, or why they are wrong (the canary then cannot run: a setup failure, not a wrong answer). */
const settingsOf = (env: NodeJS.ProcessEnv): Settings | string => {
  const { BASE_URL, CANARY_KEY_SECRET, STATUS_FILTER_CHECK, ORDERS_TABLE } = env;
  if (!BASE_URL || !CANARY_KEY_SECRET || !ORDERS_TABLE) return 'BASE_URL, CANARY_KEY_SECRET and ORDERS_TABLE must be set';
  // The stack sets it from the stage config (statusFilterChecks): `on` once the status index is ACTIVE.
  if (STATUS_FILTER_CHECK !== 'on' && STATUS_FILTER_CHECK !== 'off')
    return `STATUS_FILTER_CHECK must be on or off; got "${STATUS_FILTER_CHECK ?? ''}"`;
  return { baseUrl: BASE_URL, secretId: CANARY_KEY_SECRET, statusFilter: STATUS_FILTER_CHECK === 'on', ordersTable: ORDERS_TABLE };
};

const messageOf = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

/** The run's counts, published before it ends; a failure to publish is logged, never the run's verdict. */
const published = async (counts: { busy: number; setupFailed: number }, signal: AbortSignal) => {
  const service = process.env.SERVICE_NAME;
  if (!service) return console.log('ProbeBusy and CanarySetupFailed not published: SERVICE_NAME is not set');
  await publishProbeRun(service, counts, signal).catch((error: unknown) =>
    console.log(`ProbeBusy and CanarySetupFailed not published: ${messageOf(error)}`),
  );
};

/** A run that could not start: said, counted in CanarySetupFailed, and passed (nothing was checked, nothing was wrong). */
const cannotRun = async (what: string, reason: string, signal: AbortSignal) => {
  const line = `SETUP ${what}: ${reason}`;
  console.log(line);
  await published({ busy: 0, setupFailed: 1 }, signal);
  return line;
};

/** The canary's handler over `suites`: the bundle's entry (infra/cdk/release-checks.ts) exports `canaryHandler(<every function's suite>)`. */
export const canaryHandler = (suites: readonly Suite[]) => async (): Promise<string> => {
  const startedAt = Date.now();
  const deadline = startedAt + canaryTimeoutSeconds * 1000 - closingMs;
  const untilDeadline = () => AbortSignal.timeout(Math.max(1, deadline + closingMs / 2 - Date.now()));
  const settings = settingsOf(process.env);
  if (typeof settings === 'string') return cannotRun('settings', settings, untilDeadline());
  let key: string;
  try {
    // Read on every run: a key rotated by `npm run keys -- canary` is used from the next run on.
    ({ key } = await readCanaryKey(secrets, settings.secretId));
  } catch (error) {
    return cannotRun(
      'canary key',
      `secret ${settings.secretId} unreadable (${messageOf(error)}); create it with \`npm run keys -- canary --stage <stage>\``,
      untilDeadline(),
    );
  }
  const lines: string[] = [];
  const probeOrders = {
    client: dynamodb,
    tableName: settings.ordersTable,
    by: 'synthetic client',
    slots: probeSlots.syntheticClient,
    lifetimeSeconds: canaryTimeoutSeconds,
    signal: untilDeadline,
  };
  // The function ends a probe's list at its bound; reading stops past it only for a version that does not.
  const options = {
    ...settings,
    key,
    timeoutMs: requestTimeoutMs,
    listBytes: probeListReadCapBytes,
    listBounded: true,
    deadline,
    probeOrders,
  };
  const { failed, busy, setup, outcome } = await smoke(options, suites, (line) => {
    lines.push(line);
    console.log(line);
  });
  await published({ busy, setupFailed: setup }, untilDeadline());
  if (failed !== 0) throw new Error(outcome.lines.filter((line) => line.startsWith('FAIL')).join('; '));
  return lines.at(-1)!;
};
