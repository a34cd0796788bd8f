// The status index not ready yet, as the v2 list meets it (shared/status-index.ts holds the index's
// shape): DynamoDB's refusal of a Query, and how long a client waits before asking again.

/**
 * DynamoDB's answer to a Query of an index that is not there yet, or is still being backfilled
 * (a ValidationException: "The table does not have the specified index", "Cannot read from
 * backfilling global secondary index"): the index is usable once its status is ACTIVE
 * (docs/decisions.md#v2-list-access-paths). Asking again later fixes it; nothing else does.
 */
export const isIndexNotReady = (error: unknown): boolean =>
  error instanceof Error &&
  error.name === 'ValidationException' &&
  /does not have the specified index|backfilling global secondary index/i.test(error.message);

/** How long a client waits before asking again for a status-filtered page while the index is built (minutes to hours). */
export const indexRetryAfterSeconds = 60;
