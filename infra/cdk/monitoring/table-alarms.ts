import { type AlarmTarget, alarm } from './stage-alarm.ts';
import { filledSum, period } from './metrics.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';

/** On-demand tables rarely throttle: any throttle or DynamoDB-side error of this service's operations is news (pages). */
export function addTableAlarms(target: AlarmTarget, { tables }: StoreOrdersMonitoringProps) {
  for (const { id: tableId, table, operations } of tables) {
    const perOperation = (metricName: string) =>
      Object.fromEntries(
        operations.map((operation) => [
          operation.toLowerCase(),
          table.metric(metricName, { dimensionsMap: { TableName: table.tableName, Operation: operation }, statistic: 'Sum', period }),
        ]),
      );
    alarm(target, `${tableId}Throttles`, `DynamoDB throttled requests of this service to ${tableId}.`, {
      metric: filledSum('throttled requests', perOperation('ThrottledRequests')),
      threshold: 1,
      evaluationPeriods: 1,
    });
    alarm(target, `${tableId}SystemErrors`, `DynamoDB answered requests of this service to ${tableId} with a server error.`, {
      metric: filledSum('system errors', perOperation('SystemErrors')),
      threshold: 1,
      evaluationPeriods: 1,
    });
  }
}
