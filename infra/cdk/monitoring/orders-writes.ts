import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { statusIndex } from '../../../shared/status-index.ts';
import { failingMinutes, failingMinutesRule, minute, period } from './metrics.ts';
import { runbookPointer } from './runbook.ts';

/**
 * The orders table's writes as DynamoDB sees them, from every writer: the store's other systems
 * write this table as well as the cancel function, so this service's own call metrics
 * (OrdersTableThrottles) cannot see their throttles. AWS/DynamoDB's documented metrics and
 * dimensions (docs/operating.md#small-decisions):
 * - `WriteThrottleEvents` by `TableName`: throttled writes to the table itself;
 * - `WriteThrottleEvents` by `TableName` and `GlobalSecondaryIndexName`: throttled writes to the
 *   status index once it is built, which throttle the table's writes in turn (GSI back-pressure);
 * - `OnlineIndexThrottleEvents` by the same two: throttled index writes while it backfills.
 * The index's dimensions are named whether or not the stage has the index (no data, no datapoint),
 * so switching `ordersStatusIndex` changes the table alone (test/infra/status-index.test.ts).
 */
export const ordersWriteMetrics = (table: dynamodb.ITable) => {
  const metric = (metricName: string, dimensionsMap: Record<string, string>) =>
    new cloudwatch.Metric({ namespace: 'AWS/DynamoDB', metricName, dimensionsMap, statistic: 'Sum', period });
  const index = { TableName: table.tableName, GlobalSecondaryIndexName: statusIndex.name };
  return {
    table: metric('WriteThrottleEvents', { TableName: table.tableName }),
    index: metric('WriteThrottleEvents', index),
    backfill: metric('OnlineIndexThrottleEvents', index),
    /** The backfill's progress in percent (5-minute granularity): no data once the index is ACTIVE. */
    backfillProgress: metric('OnlineIndexPercentageProgress', index).with({ statistic: 'Maximum' }),
  };
};

/** The alarm's id, its name's last part and its runbook section. */
export const ordersWriteThrottlesAlarmId = 'OrdersTableWriteThrottles';

/**
 * OrdersTableWriteThrottles: throttled writes of the orders table, its status index or the index's
 * backfill in 2 of the last 10 minutes. It pages (the stage topic, ALARM and OK): throttling that
 * lasts or comes back leaves orders of the store's other systems unwritten, or written late; one
 * throttled write their SDK retried is no news. It guards no deploy: the store's
 * own writers move it, and no release of this service should be rolled back for them; a client of
 * this API reaches the table's writes only through cancels, which the stage throttling bounds far
 * below DynamoDB's per-partition limit (docs/operating.md#small-decisions).
 */
export function addOrdersWriteThrottlesAlarm(
  scope: Construct,
  { table, prefix, topic }: { readonly table: dynamodb.ITable; readonly prefix: string; readonly topic: sns.ITopic },
): cloudwatch.Alarm {
  const { table: tableWrites, index, backfill } = ordersWriteMetrics(table);
  const alarm = new cloudwatch.Alarm(scope, ordersWriteThrottlesAlarmId, {
    alarmName: `${prefix}-${ordersWriteThrottlesAlarmId}`,
    alarmDescription: `DynamoDB throttled writes to the orders table from any writer (the store's other systems or this service), to its status index, or to the index's backfill, in ${failingMinutesRule.failing} of the last ${failingMinutesRule.of} minutes. ${runbookPointer(ordersWriteThrottlesAlarmId)}`,
    metric: new cloudwatch.MathExpression({
      label: 'throttled writes: table, status index, backfill',
      expression: 'FILL(tableWrites, 0) + FILL(indexWrites, 0) + FILL(backfillWrites, 0)',
      usingMetrics: { tableWrites, indexWrites: index, backfillWrites: backfill },
      period: minute,
    }),
    ...failingMinutes,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    // No writes, no throttles: no data is no fault.
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  alarm.addAlarmAction(new SnsAction(topic));
  alarm.addOkAction(new SnsAction(topic));
  return alarm;
}

/** The dashboard's view of the same: throttled writes by kind, and the backfill's progress while the index is built. */
export const ordersWritesWidget = (table: dynamodb.ITable) => {
  const { table: tableWrites, index, backfill, backfillProgress } = ordersWriteMetrics(table);
  return new cloudwatch.GraphWidget({
    title: 'Orders table writes, every writer: throttled (left); status index backfill % (right)',
    width: 24,
    left: [
      tableWrites.with({ label: 'table write throttles' }),
      index.with({ label: 'status index write throttles' }),
      backfill.with({ label: 'backfill write throttles' }),
    ],
    right: [backfillProgress.with({ label: 'backfill progress (%)' })],
  });
};
