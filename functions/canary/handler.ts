/**
 * The script of each stage's CloudWatch Synthetics canary (infra/cdk/release-checks.ts): every
 * minute, the smoke check (functions/canary/smoke-check.ts, the very code `npm run smoke` runs, which reads
 * through the API's client) against the stage's public URL, with the stage's canary key from
 * Secrets Manager, and a pending order of its own (shared/probe-writes.ts) that it cancels through
 * the API and deletes. A run fails, and Synthetics records SuccessPercent 0, only when a check
 * found a wrong answer or an error no document promises; the error names the failed checks. A check
 * the service kept refusing with a documented 429 or 503 and Retry-After is BUSY: the run passes,
 * and its ProbeBusy count says so. A run that cannot set itself up (its key unreadable, its probe
 * order not written: IAM, a missing secret, throttling) asked the service nothing wrong: it passes,
 * and its ProbeSetupFailed count pages a person (CanarySetupFailed), never a deploy's guard.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { readCanaryKey } from '../../shared/canary-key.ts';
import { publishProbeBusy } from '../../shared/probe-writes.ts';
import { canaryTimeoutSeconds, probeListReadCapBytes, probeSlots } from '../../shared/probes.ts';
import { smoke } from './smoke-check.ts';

const secrets = new SecretsManagerClient({});
const dynamodb = new DynamoDBClient({ maxAttempts: 3 });

/** The checks end this long before the timeout: the probe order's deletion and ProbeBusy still fit. */
const closingMs = 10_000;
/**
 * Each request may take this long: nine checks of one or two requests each, and the probe
 * order's writes, stay inside the run's 45 s when the service answers as it should; a busy wait
 * never starts when it would end past them.
 */
const requestTimeoutMs = 4_000;

const settings = () => {
  const { BASE_URL, CANARY_KEY_SECRET, STATUS_FILTER_CHECK, ORDERS_TABLE, SERVICE_NAME } = process.env;
  if (!BASE_URL || !CANARY_KEY_SECRET || !ORDERS_TABLE || !SERVICE_NAME)
    throw new Error('BASE_URL, CANARY_KEY_SECRET, ORDERS_TABLE and SERVICE_NAME must be set');
  // The stack sets it from the stage config (statusFilterChecks): `on` once the status index is ACTIVE.
  if (STATUS_FILTER_CHECK !== 'on' && STATUS_FILTER_CHECK !== 'off')
    throw new Error(`STATUS_FILTER_CHECK must be on or off; got "${STATUS_FILTER_CHECK ?? ''}"`);
  return { baseUrl: BASE_URL, secretId: CANARY_KEY_SECRET, statusFilter: STATUS_FILTER_CHECK === 'on', ORDERS_TABLE, SERVICE_NAME };
};

export const handler = async (): Promise<string> => {
  const startedAt = Date.now();
  const { baseUrl, secretId, statusFilter, ORDERS_TABLE, SERVICE_NAME } = settings();
  const deadline = startedAt + canaryTimeoutSeconds * 1000 - closingMs;
  const untilDeadline = () => AbortSignal.timeout(Math.max(1, deadline + closingMs / 2 - Date.now()));
  const publish = (busy: number, setupFailed: number) =>
    publishProbeBusy(SERVICE_NAME, busy, untilDeadline(), setupFailed).catch((error: unknown) =>
      console.log(`ProbeBusy and ProbeSetupFailed not published: ${error instanceof Error ? error.message : String(error)}`),
    );
  // Read on every run: a key rotated by `npm run keys -- canary` is used from the next run on.
  const canaryKey = await readCanaryKey(secrets, secretId).catch((error: unknown) => error as Error);
  if (canaryKey instanceof Error) {
    const line = `SETUP  canary key: not read from ${secretId}: ${canaryKey.message}. No check ran.`;
    console.log(line);
    await publish(0, 1);
    return line;
  }
  const { key } = canaryKey;
  const lines: string[] = [];
  const probeOrders = {
    client: dynamodb,
    tableName: ORDERS_TABLE,
    by: 'synthetic client',
    slots: probeSlots.syntheticClient,
    lifetimeSeconds: canaryTimeoutSeconds,
    signal: untilDeadline,
  };
  // The function ends a probe's list at its bound; reading stops past it only for a version that does not.
  const options = { baseUrl, key, timeoutMs: requestTimeoutMs, listBytes: probeListReadCapBytes, statusFilter, deadline, probeOrders };
  const { failed, busy, setup } = await smoke(options, (line) => {
    lines.push(line);
    console.log(line);
  });
  await publish(busy, setup);
  if (failed !== 0) throw new Error(lines.filter((line) => line.startsWith('FAIL')).join('; ') || lines.join('; '));
  return lines.at(-1)!;
};
