import { type AlarmTarget, alarm } from './stage-alarm.ts';
import { failingMinutes, failingMinutesRule, filledSum, minute } from './metrics.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';

/**
 * On-demand tables rarely throttle: throttles or DynamoDB-side errors of this service's operations
 * in 2 of the last 10 minutes page. One of them, or one burst within a minute, the SDK retried
 * within the call's deadline: nobody is woken for it.
 */
export function addTableAlarms(target: AlarmTarget, { tables }: StoreOrdersMonitoringProps) {
  for (const { id: tableId, table, operations } of tables) {
    const perOperation = (metricName: string) =>
      Object.fromEntries(
        operations.map((operation) => [
          operation.toLowerCase(),
          table.metric(metricName, {
            dimensionsMap: { TableName: table.tableName, Operation: operation },
            statistic: 'Sum',
            period: minute,
          }),
        ]),
      );
    const inMinutes = `in ${failingMinutesRule.failing} of the last ${failingMinutesRule.of} minutes`;
    alarm(target, `${tableId}Throttles`, `DynamoDB throttled requests of this service to ${tableId} ${inMinutes}.`, {
      metric: filledSum('throttled requests', perOperation('ThrottledRequests'), minute),
      ...failingMinutes,
    });
    alarm(target, `${tableId}SystemErrors`, `DynamoDB answered requests of this service to ${tableId} with a server error ${inMinutes}.`, {
      metric: filledSum('system errors', perOperation('SystemErrors'), minute),
      ...failingMinutes,
    });
  }
}
