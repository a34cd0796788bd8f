/**
 * The bounds that cut a running v1 list (functions/list-orders/list-stream.ts), beside the stall window
 * (LIST_STALL_SECONDS, the stage's `listStallSeconds`). Here, not in the stream, so that the API
 * description (functions/list-orders/contract.ts) states the same numbers the function enforces.
 */

/**
 * The slowest a client may take a list, averaged over each LIST_STALL_SECONDS in which the list
 * waited for it (time the list spends reading DynamoDB does not count). 200,000 bytes/s lets a
 * list at the size limit (180 MB, ./contract.ts) end within maxListMs: a slow but honest
 * 2 Mbit/s link takes it in 12 minutes. A list shorter than one window is never judged on its rate.
 */
export const minBytesPerSecond = 200_000;

/**
 * The longest one list may run: 14 minutes, a minute short of the function's 15-minute timeout
 * (and never past the function's remaining time less releaseMarginMs), so that a cut list still
 * releases its lease and answers its client with a cut stream rather than Lambda's timeout.
 */
export const maxListMs = 14 * 60_000;
export const releaseMarginMs = 60_000;
