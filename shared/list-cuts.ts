/**
 * When a running v1 list is cut besides its stall (LIST_STALL_SECONDS, the stage's): the list
 * function enforces these (functions/list-orders.ts, `readerWatch`) and the published contract
 * states them (infra/operations.ts), both from here.
 */

/**
 * The slowest a client may take a list, averaged over each LIST_STALL_SECONDS in which the list
 * waited for it (time the list spends reading DynamoDB does not count). 200,000 bytes/s lets a
 * list at the size limit (180 MB, infra/operations.ts) end within listMaxMs: a slow but honest
 * 2 Mbit/s link takes it in 12 minutes. A list shorter than one window is never judged on its rate.
 */
export const listMinBytesPerSecond = 200_000;

/**
 * The longest one list may run: 14 minutes, a minute short of the function's 15-minute timeout
 * (and never past the function's remaining time less a minute), so that a cut list still
 * releases its lease and answers its client with a cut stream rather than Lambda's timeout.
 */
export const listMaxMs = 14 * 60_000;
