/**
 * The broken releases of the alarm scenarios: built as test/lib/broken-builds.ts builds the pre-traffic
 * hook's, from the real handler sources with one deliberate fault each.
 */
import { faults } from '../broken-builds.ts';

export const releaseFaults = {
  // Refuses every key with exactly "Unauthorized": 401 for every client, no 5xx, no error metric.
  authorizerDeniesAll: faults.authorizer,
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
} as const;

export type FaultName = keyof typeof releaseFaults;
