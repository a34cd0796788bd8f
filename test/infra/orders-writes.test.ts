/**
 * OrdersTableWriteThrottles: the orders table's throttled writes from every writer (the store's
 * other systems write it too), its status index's, and the index's backfill's, read from
 * AWS/DynamoDB with the metric names and dimensions DynamoDB documents ("DynamoDB metrics and
 * dimensions": WriteThrottleEvents by TableName for the table, by TableName and
 * GlobalSecondaryIndexName for an index; OnlineIndexThrottleEvents by the same two while an index
 * is built). It pages on the stage topic and guards no deploy.
 */
import { describe, expect, it } from 'vitest';
import { stages } from '../../infra/stage-config.ts';
import { statusIndex } from '../../shared/status-index.ts';
import { stageNames, sharedApp } from '../lib/cdk.ts';

type Resource = { Type: string; Properties: Record<string, unknown> };
type MetricQuery = {
  Id: string;
  Expression?: string;
  ReturnData?: boolean;
  MetricStat?: {
    Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: unknown }[] };
    Period: number;
    Stat: string;
  };
};

describe.each(stageNames)('the %s orders write throttles alarm', (stage) => {
  const resources = sharedApp().template(stage).toJSON().Resources as Record<string, Resource>;
  const [alarmId, alarm] = Object.entries(resources).find(
    ([, resource]) =>
      resource.Type === 'AWS::CloudWatch::Alarm' && resource.Properties.AlarmName === `StoreOrders-${stage}-OrdersTableWriteThrottles`,
  )!;
  const ordersTableId = Object.entries(resources).find(
    ([, resource]) => resource.Properties?.TableName === stages[stage].ordersTableName,
  )![0];
  // The paging topic: the one the stack's AlarmTopicArn output names.
  const outputs = sharedApp().template(stage).toJSON().Outputs as Record<string, { Value: { Ref?: string } }>;
  const topicId = outputs.AlarmTopicArn!.Value.Ref!;
  const queries = alarm.Properties.Metrics as MetricQuery[];

  it('counts every throttled write of the table, of its status index and of the index backfill, by DynamoDB’s own metrics', () => {
    const metrics = queries
      .filter((query) => query.MetricStat !== undefined)
      .map(({ MetricStat }) => ({
        namespace: MetricStat!.Metric.Namespace,
        name: MetricStat!.Metric.MetricName,
        dimensions: Object.fromEntries(MetricStat!.Metric.Dimensions.map(({ Name, Value }) => [Name, Value])),
        stat: MetricStat!.Stat,
        period: MetricStat!.Period,
      }));
    const table = { TableName: { Ref: ordersTableId } };
    const index = { ...table, GlobalSecondaryIndexName: statusIndex.name };
    expect(metrics).toEqual(
      expect.arrayContaining([
        { namespace: 'AWS/DynamoDB', name: 'WriteThrottleEvents', dimensions: table, stat: 'Sum', period: 60 },
        { namespace: 'AWS/DynamoDB', name: 'WriteThrottleEvents', dimensions: index, stat: 'Sum', period: 60 },
        { namespace: 'AWS/DynamoDB', name: 'OnlineIndexThrottleEvents', dimensions: index, stat: 'Sum', period: 60 },
      ]),
    );
    expect(metrics).toHaveLength(3);
    // The sum of all three, each filled: a throttle of any one alone is a datapoint (a missing operand would blank the sum).
    const [summed] = queries.filter((query) => query.ReturnData !== false);
    const ids = queries.filter((query) => query.MetricStat !== undefined).map(({ Id }) => Id);
    expect(summed!.Expression!.split(' + ').sort()).toEqual(ids.map((id) => `FILL(${id}, 0)`).sort());
  });

  it('pages on throttled writes in 2 of the last 10 minutes (no single event), ALARM and OK to the stage topic, quiet without writes', () => {
    expect(alarm.Properties).toMatchObject({
      Threshold: 1,
      EvaluationPeriods: 10,
      DatapointsToAlarm: 2,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ Ref: topicId }],
      OKActions: [{ Ref: topicId }],
      AlarmDescription: expect.stringContaining('docs/runbook.md, section "OrdersTableWriteThrottles"'),
    });
  });

  it('guards no deploy: the store’s own writers move it, and no release should roll back for them', () => {
    const watched = Object.values(resources)
      .filter((resource) => resource.Type === 'AWS::CodeDeploy::DeploymentGroup')
      .flatMap((group) =>
        (group.Properties.AlarmConfiguration as { Alarms: { Name: { Ref: string } }[] }).Alarms.map(({ Name }) => Name.Ref),
      );
    expect(watched.length).toBeGreaterThan(0);
    expect(watched).not.toContain(alarmId);
  });

  it('is on the dashboard with the backfill’s progress', () => {
    const dashboard = Object.values(resources).find((resource) => resource.Type === 'AWS::CloudWatch::Dashboard')!;
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    expect(body).toContain('OnlineIndexPercentageProgress');
    expect(body).toContain('OrdersTableWriteThrottles');
  });
});
