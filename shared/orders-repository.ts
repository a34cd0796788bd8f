import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { NumberValue, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { callDeadline, type Deadline, type TableRef, toServiceError } from './dynamo.ts';
import { isProbeOrderId } from './probes.ts';
import { type InvalidItemReport, type Order, storedOrderSchema } from './schemas.ts';
import { statusIndex } from './status-index.ts';

/**
 * Turns a stored item into an Order. Fields that break the table contract are left out (and
 * reported) rather than failing the whole list; an item whose id is not an int64 is skipped. A
 * probe's own order (an id of the range shared/probes.ts reserves) is no client's: never listed.
 */
export const toOrder = (item: Record<string, unknown>, onInvalid?: (report: InvalidItemReport) => void): Order | undefined => {
  const id = item.id instanceof NumberValue ? item.id.value : item.id;
  if (typeof id === 'string' && isProbeOrderId(id)) return undefined;
  const parsed = storedOrderSchema.safeParse(item);
  if (parsed.success) return parsed.data;
  const fields = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0])))];
  if (fields.includes('id')) {
    onInvalid?.({ id, fields, dropped: 'item' });
    return undefined;
  }
  onInvalid?.({ id, fields, dropped: 'fields' });
  const kept = Object.fromEntries(Object.entries(item).filter(([key]) => !fields.includes(key)));
  return storedOrderSchema.parse(kept);
};

const orderAttributes = ['id', 'petId', 'quantity', 'shipDate', 'complete', 'status'];

type ScanOptions = {
  /** Parallel Scan segments (default 4). */
  readonly segments?: number;
  /** Items per Scan request; DynamoDB's own 1 MB page limit applies either way. Every page is read. */
  readonly pageSize?: number;
  readonly onInvalid?: (report: InvalidItemReport) => void;
  /** Bounds each Scan request (default: the call budget alone). */
  readonly deadline?: Deadline;
};

async function* scanSegment(table: TableRef, segment: number, totalSegments: number, options: ScanOptions) {
  const deadline = options.deadline ?? callDeadline();
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await table.client.send(
      new ScanCommand({
        TableName: table.tableName,
        Segment: segment,
        TotalSegments: totalSegments,
        ExclusiveStartKey: startKey,
        Limit: options.pageSize,
        // Only what an Order carries: less to read, transfer and parse.
        ProjectionExpression: orderAttributes.map((_, i) => `#a${i}`).join(','),
        ExpressionAttributeNames: Object.fromEntries(orderAttributes.map((name, i) => [`#a${i}`, name])),
      }),
      deadline(),
    );
    const orders: Order[] = [];
    for (const item of page.Items ?? []) {
      const order = toOrder(item, options.onInvalid);
      if (order !== undefined) orders.push(order);
    }
    yield orders;
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
}

type Next<T> = { index: number; result?: IteratorResult<T>; error?: unknown };

/**
 * Every order in the table, one Scan page at a time, read by `segments` parallel Scans.
 * Pages arrive in whatever order DynamoDB answers; at most one page per segment is held
 * ahead of the consumer, so memory stays bounded whatever the table's size.
 */
export async function* scanOrderPages(table: TableRef, options: ScanOptions = {}): AsyncGenerator<Order[]> {
  const segments = options.segments ?? 4;
  const scanners = Array.from({ length: segments }, (_, i) => scanSegment(table, i, segments, options));
  // Promises here never reject, so a failing segment cannot leave an unhandled rejection behind.
  const pull = (index: number): Promise<Next<Order[]>> =>
    scanners[index]!.next().then(
      (result) => ({ index, result }),
      (error: unknown) => ({ index, error }),
    );
  const pending = new Map(scanners.map((_, i) => [i, pull(i)]));
  try {
    while (pending.size > 0) {
      const next = await Promise.race(pending.values());
      if (next.error !== undefined) throw toServiceError(next.error);
      if (next.result!.done) {
        pending.delete(next.index);
        continue;
      }
      pending.set(next.index, pull(next.index));
      yield next.result!.value;
    }
  } finally {
    // Stop the other segments when the consumer stops early or a segment failed.
    await Promise.all(scanners.map((scanner) => scanner.return(undefined).catch(() => undefined)));
  }
}

/**
 * Where one page of a read comes from: the whole table (optionally one parallel Scan segment of
 * `totalSegments`), or the orders of one status through the status index.
 */
export type PageSource =
  | { readonly kind: 'scan'; readonly segment?: { readonly segment: number; readonly totalSegments: number } }
  | { readonly kind: 'status'; readonly status: string };

export type OrderPage = {
  readonly orders: Order[];
  /** DynamoDB's LastEvaluatedKey: where the next page starts; absent once the source is read whole. */
  readonly nextKey?: Record<string, unknown>;
  /** Read capacity units this page cost, as DynamoDB reports them (undefined where it reports none). */
  readonly readCapacityUnits?: number;
};

const projection = {
  ProjectionExpression: orderAttributes.map((_, i) => `#a${i}`).join(','),
  ExpressionAttributeNames: Object.fromEntries(orderAttributes.map((name, i) => [`#a${i}`, name])),
};

/**
 * One page of orders: exactly one DynamoDB request (Scan or Query) of at most `limit` items,
 * starting after `startKey`. DynamoDB's own 1 MB page limit may end a page sooner; a page that
 * is not the last may even be empty (items dropped by toOrder).
 */
export const readOrderPage = async (
  table: TableRef,
  source: PageSource,
  options: {
    readonly limit: number;
    readonly startKey?: Record<string, unknown> | undefined;
    readonly deadline?: Deadline;
    readonly onInvalid?: (report: InvalidItemReport) => void;
  },
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
          new ScanCommand({ ...common, ...projection, Segment: source.segment?.segment, TotalSegments: source.segment?.totalSegments }),
          deadline,
        )
      : table.client.send(
          new QueryCommand({
            ...common,
            IndexName: statusIndex.name,
            KeyConditionExpression: '#status = :status',
            ProjectionExpression: projection.ProjectionExpression,
            ExpressionAttributeNames: { ...projection.ExpressionAttributeNames, '#status': statusIndex.partitionKey },
            ExpressionAttributeValues: { ':status': source.status },
          }),
          deadline,
        );
  try {
    const page = await send();
    const orders: Order[] = [];
    for (const item of page.Items ?? []) {
      const order = toOrder(item, options.onInvalid);
      if (order !== undefined) orders.push(order);
    }
    return {
      orders,
      ...(page.LastEvaluatedKey === undefined ? {} : { nextKey: page.LastEvaluatedKey }),
      ...(page.ConsumedCapacity?.CapacityUnits === undefined ? {} : { readCapacityUnits: page.ConsumedCapacity.CapacityUnits }),
    };
  } catch (error) {
    throw toServiceError(error);
  }
};

/**
 * About how many items the table holds: DynamoDB's ItemCount, which it refreshes about every
 * six hours. Enough to refuse a list that could never fit in one response, before its first byte.
 */
export const approximateItemCount = async (table: TableRef, deadline: Deadline = callDeadline()): Promise<number> => {
  try {
    const { Table } = await table.client.send(new DescribeTableCommand({ TableName: table.tableName }), deadline());
    return Table?.ItemCount ?? 0;
  } catch (error) {
    throw toServiceError(error);
  }
};
