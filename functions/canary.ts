/**
 * The script of each stage's CloudWatch Synthetics canary (infra/cdk/release-checks.ts): every
 * minute, the read-only smoke check (shared/smoke-check.ts, the very code `npm run smoke` runs,
 * which reads through the API's client) against the stage's public URL, with the stage's canary
 * key from Secrets Manager. A run fails, and
 * Synthetics records SuccessPercent 0, when any check fails; the error names the failed checks.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { readCanaryKey } from '../shared/canary-key.ts';
import { smoke } from '../shared/smoke-check.ts';

const secrets = new SecretsManagerClient({});

/**
 * Each request may take this long: at most seven checks, one request each, stay inside the canary's
 * 55-second timeout (42 s if every one timed out) with room for a tier wait (at most 5 s).
 */
const requestTimeoutMs = 6_000;
/**
 * Of each v1 list, the canary reads this much and checks the orders in it, then stops: a full list of
 * a large store streams for minutes (about 2 MB/s after its first 10 MB), longer than a run may
 * take, and two full scans a minute would be the canary's own load on the table.
 */
const listBytes = 256 * 1024;

export const handler = async (): Promise<string> => {
  const { BASE_URL: baseUrl, CANARY_KEY_SECRET: secretId, STATUS_FILTER_CHECK: statusFilter } = process.env;
  if (!baseUrl || !secretId) throw new Error('BASE_URL and CANARY_KEY_SECRET must be set');
  // The stack sets it from the stage config (statusFilterChecks): `on` once the status index is ACTIVE.
  if (statusFilter !== 'on' && statusFilter !== 'off')
    throw new Error(`STATUS_FILTER_CHECK must be on or off; got "${statusFilter ?? ''}"`);
  // Read on every run: a key rotated by `npm run keys -- canary` is used from the next run on.
  const { key } = await readCanaryKey(secrets, secretId);
  const lines: string[] = [];
  const failed = await smoke({ baseUrl, key, timeoutMs: requestTimeoutMs, listBytes, statusFilter: statusFilter === 'on' }, (line) => {
    lines.push(line);
    console.log(line);
  });
  if (failed !== 0) throw new Error(lines.filter((line) => line.startsWith('FAIL')).join('; ') || lines.join('; '));
  return lines.at(-1)!;
};
