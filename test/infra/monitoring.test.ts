import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { stages } from '../../infra/stage-config.ts';
import { StoreOrdersStack } from '../../infra/store-orders-stack.ts';
import { metricNames } from '../../shared/observability.ts';
import { cdkJsonContext, repoRoot, stageNames, synthApp, tempDir } from './support.ts';

const { template } = synthApp();

const alarmIds = [
  'Api5xxRate',
  'ApiLatencyP99',
  'ListOrdersErrors',
  'CancelOrderErrors',
  'AuthorizerErrors',
  'ListOrdersThrottles',
  'CancelOrderThrottles',
  'AuthorizerThrottles',
  'AuthFailures',
  'OrdersTableThrottles',
  'OrdersTableSystemErrors',
  'ApiKeysTableThrottles',
  'ApiKeysTableSystemErrors',
];

describe.each(stageNames)('the %s monitoring', (stage) => {
  const config = stages[stage];
  const t = template(stage);
  const prefix = `StoreOrders-${stage}`;
  const alarms = () => Object.values(t.findResources('AWS::CloudWatch::Alarm'));
  const alarmNamed = (id: string) => alarms().find((alarm) => alarm.Properties.AlarmName === `${prefix}-${id}`)?.Properties;

  it('has exactly the alarms the runbook explains, all notifying the stage alarm topic', () => {
    expect(
      alarms()
        .map((alarm) => alarm.Properties.AlarmName)
        .sort(),
    ).toEqual(alarmIds.map((id) => `${prefix}-${id}`).sort());
    const topic = Object.keys(t.findResources('AWS::SNS::Topic'))[0];
    for (const alarm of alarms()) {
      expect(alarm.Properties).toMatchObject({
        AlarmActions: [{ Ref: topic }],
        OKActions: [{ Ref: topic }],
        TreatMissingData: 'notBreaching',
        AlarmDescription: expect.stringContaining('docs/runbook.md'),
      });
    }
  });

  it('alarms on the API 5xx rate and p99 latency with the stage thresholds', () => {
    expect(alarmNamed('Api5xxRate')).toMatchObject({
      Threshold: config.alarms.serverErrorRatePercent,
      Metrics: expect.arrayContaining([
        expect.objectContaining({ Expression: '100 * FILL(errors, 0) / requests' }),
        expect.objectContaining({
          Id: 'errors',
          MetricStat: expect.objectContaining({ Metric: expect.objectContaining({ MetricName: '5XXError' }) }),
        }),
        expect.objectContaining({
          Id: 'requests',
          MetricStat: expect.objectContaining({ Metric: expect.objectContaining({ MetricName: 'Count' }) }),
        }),
      ]),
    });
    expect(alarmNamed('ApiLatencyP99')).toMatchObject({
      MetricName: 'Latency',
      Namespace: 'AWS/ApiGateway',
      ExtendedStatistic: 'p99',
      Threshold: config.alarms.p99LatencyMs,
      EvaluationPeriods: 3,
    });
  });

  it('alarms on errors and throttles of every function', () => {
    for (const name of ['ListOrders', 'CancelOrder']) {
      expect(alarmNamed(`${name}Errors`)).toMatchObject({
        MetricName: 'Errors',
        Namespace: 'AWS/Lambda',
        Threshold: config.alarms.functionErrors,
      });
    }
    for (const name of ['ListOrders', 'CancelOrder', 'Authorizer']) {
      expect(alarmNamed(`${name}Throttles`)).toMatchObject({ MetricName: 'Throttles', Namespace: 'AWS/Lambda', Threshold: 1 });
    }
  });

  it('counts authorizer errors without the refusals (AuthFailures), and alarms on a surge of refused keys', () => {
    expect(alarmNamed('AuthorizerErrors')).toMatchObject({
      Threshold: config.alarms.functionErrors,
      Metrics: expect.arrayContaining([
        expect.objectContaining({ Expression: 'FILL(errors, 0) - FILL(refusals, 0)' }),
        expect.objectContaining({
          Id: 'refusals',
          MetricStat: expect.objectContaining({
            Metric: {
              MetricName: metricNames.authFailures,
              Namespace: 'StoreOrders',
              Dimensions: [{ Name: 'service', Value: `store-orders-${config.stage}` }],
            },
          }),
        }),
      ]),
    });
    expect(alarmNamed('AuthFailures')).toMatchObject({
      MetricName: metricNames.authFailures,
      Namespace: 'StoreOrders',
      Threshold: config.alarms.authFailures,
    });
  });

  it('alarms on DynamoDB throttles and system errors of both tables', () => {
    const metricNamesOf = (id: string) =>
      ((alarmNamed(id)?.Metrics ?? []) as { MetricStat?: { Metric: { MetricName: string } } }[]).flatMap((m) =>
        m.MetricStat ? [m.MetricStat.Metric.MetricName] : [],
      );
    for (const table of ['OrdersTable', 'ApiKeysTable']) {
      expect(new Set(metricNamesOf(`${table}Throttles`))).toEqual(new Set(['ThrottledRequests']));
      expect(new Set(metricNamesOf(`${table}SystemErrors`))).toEqual(new Set(['SystemErrors']));
    }
  });

  it('has an alarm topic that accepts TLS publishing only', () => {
    t.resourceCountIs('AWS::SNS::Topic', 1);
    t.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: [Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })] },
    });
    // No address configured: nobody is subscribed by the stack.
    t.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  it('has a dashboard named for the stage', () => {
    t.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    t.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: prefix });
    const body = JSON.stringify(t.findResources('AWS::CloudWatch::Dashboard'));
    for (const metric of ['5XXError', 'Latency', 'Invocations', 'Throttles', metricNames.ordersCancelled, metricNames.listDuration]) {
      expect(body).toContain(metric);
    }
  });

  it('saves Logs Insights queries for on-call', () => {
    const names = Object.values(t.findResources('AWS::Logs::QueryDefinition')).map((query) => query.Properties.Name);
    expect(names.sort()).toEqual(
      ['auth-refusals', 'cold-starts-and-memory', 'errors', 'gateway-errors', 'request-by-id', 'slowest-requests'].map(
        (q) => `${prefix}/${q}`,
      ),
    );
  });

  it('keeps every log group for the stage retention', () => {
    for (const group of Object.values(t.findResources('AWS::Logs::LogGroup'))) {
      expect(group.Properties.RetentionInDays).toBe(config.logRetentionDays);
    }
  });
});

describe('the runbook', () => {
  const runbook = readFileSync(join(repoRoot, 'docs/runbook.md'), 'utf8');

  it.each(alarmIds)('has a section for the %s alarm', (id) => {
    expect(runbook).toMatch(new RegExp(`^### ${id}$`, 'm'));
  });
});

describe('an alarm e-mail in the stage configuration', () => {
  it('subscribes that address to the alarm topic', () => {
    const app = new App({ outdir: tempDir('store-orders-email-'), context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const config = { ...stages.staging, alarms: { ...stages.staging.alarms, email: 'oncall@example.com' } };
    const t = Template.fromStack(new StoreOrdersStack(app, 'EmailStack', { config }));
    t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
  });
});
