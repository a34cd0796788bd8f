/**
 * The broken releases of the alarm scenarios: built as test/lib/broken-builds.ts builds the pre-traffic
 * hook's, from the real handler sources with one deliberate fault each, or the shipped code with a
 * wrong setting (`environment` alone).
 */
import { faults } from '../broken-builds.ts';

export const releaseFaults = {
  // Refuses every key with exactly "Unauthorized": 401 for every client, no 5xx, no error metric.
  authorizerDeniesAll: faults.authorizer,
  // Configured with a DynamoDB endpoint nothing answers at (a test's setting leaked into a release):
  // every key lookup fails, the authorizer throws, API Gateway answers 500 AUTHORIZER_FAILURE.
  authorizerUnreachable: { handlerFile: 'functions/authorizer/handler.ts', environment: { DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' } },
  // Answers every list 500 internal_error before its first byte: a failure Lambda counts as a success.
  listFails: {
    handlerFile: 'functions/list-orders/handler.ts',
    file: 'functions/list-orders/handler.ts',
    replace: 'first = await pages.next();',
    with: "throw new Error('a broken release');",
  },
  // Answers 409 order_not_cancellable for a pending order (and cancels nothing): only 4xx, no error metric.
  cancelPendingConflict: faults.cancelPendingConflict,
  // Answers every page after the first 400 invalid_cursor: only 4xx, no error metric.
  secondPageInvalid: faults.secondPageInvalid,
  // Its DynamoDB client points at a closed port: every cancel answers 503 with Retry-After, a documented refusal.
  cancelUnavailable: faults.cancelUnavailable,
  // Finds every key's list slots full: every list answers 429 with Retry-After.
  listLeaseNeverFree: faults.listLeaseNeverFree,
  // Repeats each segment's first Scan page: a list read whole never ends, and is cut when it has run
  // its maximum duration. Run under a function timeout of 63 s (`timeoutSeconds`), so that the cut
  // comes 3 s in (the bound is the remaining time less a minute) instead of 14 minutes in, and with
  // Scan pages of 100 (`environment`): the scenarios' 5,000 orders fit in one page per segment at
  // the stage's page size, where a production store needs many.
  listRepeatsFirstPage: { ...faults.listRepeatsFirstPage, timeoutSeconds: 63, environment: { SCAN_PAGE_SIZE: '100' } },
} as const;

export type FaultName = keyof typeof releaseFaults;
