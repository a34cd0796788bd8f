/**
 * The orders table's index on `status`: what a v2 list's status filter Queries (functions/list-orders-paged/page-read.ts,
 * which also says what the v2 list answers while the index is not ready).
 * The stack adds it when the stage config says so (infra/cdk/stage-status-index.ts); the local tables always
 * have it (infra/local/local-tables.ts). Imports nothing, so the pre-traffic hook's bundle can read it too.
 */
export const statusIndex = {
  name: 'status-index',
  partitionKey: 'status',
  projected: ['petId', 'quantity', 'shipDate', 'complete'],
} as const;

/**
 * Whether a table, as DescribeTable describes it, has the status index ready for Query: ACTIVE, or
 * UPDATING (a settings change of an index already built, which still answers Query). CREATING (the
 * backfill) and DELETING do not, nor an index that is not there.
 */
export const statusIndexQueryable = (table: { GlobalSecondaryIndexes?: { IndexName?: string; IndexStatus?: string }[] } | undefined) =>
  table?.GlobalSecondaryIndexes?.some(
    (index) => index.IndexName === statusIndex.name && (index.IndexStatus === 'ACTIVE' || index.IndexStatus === 'UPDATING'),
  ) ?? false;

/** The message of the 503 a status-filtered v2 page answers while the index is not ready: the pre-traffic hook knows that answer by it. */
export const indexNotReadyMessage = 'The status filter is not available yet: retry later, or read without status.';
