import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { callDeadline, type Deadline, type TableRef, toServiceError } from '../../shared/dynamo.ts';
import { orderProjection, toOrders } from '../../shared/order-items.ts';
import type { InvalidItemReport, Order } from '../../shared/schemas.ts';

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
        ...orderProjection,
      }),
      deadline(),
    );
    yield toOrders(page.Items, options.onInvalid);
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
