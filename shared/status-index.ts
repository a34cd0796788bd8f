/**
 * The orders table's index on `status`: what a v2 list's status filter Queries (shared/list-query.ts).
 * The stack adds it when the stage config says so (infra/cdk/status-index.ts); the local tables always
 * have it (infra/local/tables.ts). Imports nothing, so the pre-traffic hook's bundle can read it too.
 */
export const statusIndex = {
  name: 'status-index',
  partitionKey: 'status',
  projected: ['petId', 'quantity', 'shipDate', 'complete'],
} as const;

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

/**
 * Whether a table, as DescribeTable describes it, has the status index ready for Query: ACTIVE, or
 * UPDATING (a settings change of an index already built, which still answers Query). CREATING (the
 * backfill) and DELETING do not, nor an index that is not there.
 */
export const statusIndexQueryable = (table: { GlobalSecondaryIndexes?: { IndexName?: string; IndexStatus?: string }[] } | undefined) =>
  table?.GlobalSecondaryIndexes?.some(
    (index) => index.IndexName === statusIndex.name && (index.IndexStatus === 'ACTIVE' || index.IndexStatus === 'UPDATING'),
  ) ?? false;
