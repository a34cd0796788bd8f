/**
 * The v2 list's page read: where a page comes from (docs/decisions.md#v2-list-access-paths), its one
 * DynamoDB request, the status index's refusal while it is not ready, and the orders that match.
 */
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { callDeadline, type Deadline, type TableRef, toServiceError } from '../../shared/dynamo.ts';
import { apiError } from '../../shared/errors.ts';
import { type ListQuery, matches } from './list-query.ts';
import { logger, metricNames, metrics } from '../../shared/observability.ts';
import { orderProjection, toOrders } from '../../shared/order-items.ts';
import type { InvalidItemReport, Order } from '../../shared/schemas.ts';
import { indexNotReadyMessage, statusIndex } from '../../shared/status-index.ts';

/**
 * Where one page of a read comes from: the whole table (optionally one parallel Scan segment of
 * `totalSegments`), or the orders of one status through the status index.
 */
export type PageSource =
  | { readonly kind: 'scan'; readonly segment?: { readonly segment: number; readonly totalSegments: number } }
  | { readonly kind: 'status'; readonly status: string };

/**
 * Where the pages come from: a split read Scans its segment of the table; a status filter
 * Queries the status index; anything else Scans the table (docs/decisions.md#v2-list-access-paths).
 */
export const pageSource = (query: ListQuery): PageSource => {
  if (query.split !== undefined && query.split.parts > 1)
    return { kind: 'scan', segment: { segment: query.split.part - 1, totalSegments: query.split.parts } };
  if (query.status !== undefined) return { kind: 'status', status: query.status };
  return { kind: 'scan' };
};

export type OrderPage = {
  readonly orders: Order[];
  /** DynamoDB's LastEvaluatedKey: where the next page starts; absent once the source is read whole. */
  readonly nextKey?: Record<string, unknown>;
  /** Read capacity units this page cost, as DynamoDB reports them (undefined where it reports none). */
  readonly readCapacityUnits?: number;
};

type PageOptions = {
  readonly startKey?: Record<string, unknown> | undefined;
  readonly deadline?: Deadline;
  readonly onInvalid?: (report: InvalidItemReport) => void;
};

/**
 * One page of orders: exactly one DynamoDB request (Scan or Query) of at most `limit` items,
 * starting after `startKey`. DynamoDB's own 1 MB page limit may end a page sooner; a page that
 * is not the last may even be empty (items left out by toOrders).
 */
export const readOrderPage = async (
  table: TableRef,
  source: PageSource,
  options: PageOptions & { readonly limit: number },
): Promise<OrderPage> => {
  const common = {
    TableName: table.tableName,
    ExclusiveStartKey: options.startKey,
    Limit: options.limit,
    ReturnConsumedCapacity: 'TOTAL' as const,
  };
  const deadline = (options.deadline ?? callDeadline())();
  const send = () =>
    source.kind === 'scan'
      ? table.client.send(
          new ScanCommand({
            ...common,
            ...orderProjection,
            Segment: source.segment?.segment,
            TotalSegments: source.segment?.totalSegments,
          }),
          deadline,
        )
      : table.client.send(
          new QueryCommand({
            ...common,
            IndexName: statusIndex.name,
            KeyConditionExpression: '#status = :status',
            ProjectionExpression: orderProjection.ProjectionExpression,
            ExpressionAttributeNames: { ...orderProjection.ExpressionAttributeNames, '#status': statusIndex.partitionKey },
            ExpressionAttributeValues: { ':status': source.status },
          }),
          deadline,
        );
  try {
    const page = await send();
    return {
      orders: toOrders(page.Items, options.onInvalid),
      ...(page.LastEvaluatedKey === undefined ? {} : { nextKey: page.LastEvaluatedKey }),
      ...(page.ConsumedCapacity?.CapacityUnits === undefined ? {} : { readCapacityUnits: page.ConsumedCapacity.CapacityUnits }),
    };
  } catch (error) {
    throw toServiceError(error);
  }
};

/**
 * DynamoDB's answer to a Query of an index that is not there yet, or is still being backfilled
 * (a ValidationException: "The table does not have the specified index", "Cannot read from
 * backfilling global secondary index"): the index is usable once its status is ACTIVE
 * (docs/decisions.md#v2-list-access-paths). Asking again later fixes it; nothing else does.
 */
const isIndexNotReady = (error: unknown): boolean =>
  error instanceof Error &&
  error.name === 'ValidationException' &&
  /does not have the specified index|backfilling global secondary index/i.test(error.message);

/** How long a client waits before asking again for a status-filtered page while the index is built (minutes to hours). */
export const indexRetryAfterSeconds = 60;

/**
 * A status filter read before its index is ACTIVE (not deployed yet, or backfilling:
 * docs/reference/stages.md#the-status-index) is a 503 the client retries later, never a 500.
 */
const whenIndexNotReady = (error: unknown): unknown => {
  if (!isIndexNotReady(error)) return error;
  logger.warn('status index not ready', { reason: (error as Error).message });
  // A documented refusal, not a failure: Api5xxRate and the availability SLO leave it out.
  metrics.addMetric(metricNames.statusIndexNotReady, 'Count', 1);
  return Object.assign(apiError('service_unavailable', indexNotReadyMessage, { cause: error }), {
    headers: { 'Retry-After': String(indexRetryAfterSeconds) },
  });
};

/**
 * The request's page: read from the query's source, its orders those that match the query's filters
 * (`ordersRead` counts all that were read).
 */
export const readPage = async (table: TableRef, query: ListQuery, options: PageOptions) => {
  const source = pageSource(query);
  const page = await readOrderPage(table, source, { ...options, limit: query.pageSize }).catch((error: unknown) => {
    throw source.kind === 'status' ? whenIndexNotReady(error) : error;
  });
  return { ...page, source: source.kind, orders: page.orders.filter((order) => matches(query, order)), ordersRead: page.orders.length };
};
