/**
 * What a client gets when Lambda refuses to run a function (throttling: the list's reserved
 * concurrency, or the account's, used up). Lambda's documentation: "If the Lambda API rejects the
 * invocation request, API Gateway returns a 500 error code"; which gateway response type that 500
 * is (and so whether it can be customized to 503) is not documented. The service may only promise
 * what is certain: a 5xx carrying the shared Error record, whichever of the two it is. No AWS
 * account here can produce a throttle, so this checks the promise where clients read it (docs/api.md's
 * error table) and the gateway responses that can carry it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorCodes, errorRecord, gatewayResponseCodes } from '../../shared/errors.ts';
import { repoRoot } from '../lib/cdk.ts';

const apiDoc = readFileSync(join(repoRoot, 'docs/api.md'), 'utf8');
/** The API doc's error table: status, code, when. */
const errorRows = apiDoc
  .split('\n')
  .filter((line) => /^\| \d{3} \| `[a-z_]+` \|/.test(line))
  .map((line) => {
    const [, status, code, when] = /^\| (\d{3}) \| `([a-z_]+)` \| (.*) \|$/.exec(line)!;
    return { status: Number(status), code: code!, when: when! };
  });

describe('a throttled function, as a client sees it', () => {
  it("is promised as a 500 internal_error per Lambda's documentation, or a 503 service_unavailable, never as a certain 503", () => {
    expect(errorRows.length).toBeGreaterThan(5);
    const mentions = errorRows.filter(({ when }) => /throttl|concurrency/i.test(when) && /function|Lambda/.test(when));
    expect(mentions.map(({ status }) => status).sort()).toEqual([500, 503]);
    // The 503 row may name it only as the possibility it is.
    expect(mentions.find(({ status }) => status === 503)?.when).toMatch(/may|might|possibly/i);
  });

  it('gets the shared Error record from either gateway response that may carry it', () => {
    for (const type of ['DEFAULT_5XX', 'INTEGRATION_FAILURE'] as const) {
      const code = gatewayResponseCodes[type];
      expect(errorCodes[code].status).toBeGreaterThanOrEqual(500);
      expect(errorRecord(code)).toMatchObject({ code });
    }
  });
});
