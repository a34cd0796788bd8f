import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { serviceName } from '../../infra/names.ts';
import { stages } from '../../infra/stage-config.ts';
import { StoreOrdersStack } from '../../infra/cdk/store-orders-stack.ts';
import { metricNames } from '../../shared/observability.ts';
import { routes } from '../../shared/routes.ts';
import { cdkJsonContext, repoRoot, stageNames, sharedApp, tempDir } from '../lib/cdk.ts';

const { template } = sharedApp();

const alarmIds = [
  'Api5xxRate',
  'CancelLatencyP99',
  'ListFirstByteP99',
  'ListOrdersErrors',
  'CancelOrderErrors',
  'ListOrdersPagedErrors',
  'ListOrdersPagedThrottles',
  'PagedListLatencyP99',
  'ListOrdersNearTimeout',
  'AuthorizerFailures',
  'ListOrdersThrottles',
  'CancelOrderThrottles',
  'AuthorizerThrottles',
  'AuthFailures',
  'OrdersTableThrottles',
  'OrdersTableWriteThrottles',
  'OrdersTableSystemErrors',
  'ApiKeysTableThrottles',
  'ApiKeysTableSystemErrors',
  'ListLeasesTableThrottles',
  'ListLeasesTableSystemErrors',
  'CanaryFailed',
  'CanaryStopped',
  'RefusedShare',
];

describe.each(stageNames)('the %s monitoring', (stage) => {
  const config = stages[stage];
  const t = template(stage);
  const prefix = `StoreOrders-${stage}`;
  // The SLOs' window alarms notify nobody themselves: their composite alarms do (test/infra/slo.test.ts).
  const alarms = () =>
    Object.values(t.findResources('AWS::CloudWatch::Alarm')).filter((alarm) => !/Burn(Long|Short)$/.test(alarm.Properties.AlarmName));
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
        // No traffic is no fault; no canary run is (CanaryStopped).
        TreatMissingData: alarm.Properties.AlarmName === `${prefix}-CanaryStopped` ? 'breaching' : 'notBreaching',
        AlarmDescription: expect.stringContaining('docs/runbook.md'),
      });
    }
  });

  it('alarms on the API 5xx rate, the p99 latency of DELETE and the p99 of the list first byte, with the stage thresholds', () => {
    expect(alarmNamed('Api5xxRate')).toMatchObject({
      Threshold: config.alarms.serverErrorRatePercent,
      Metrics: expect.arrayContaining([
        // Judged only with a minimum of requests, like RefusedShare: on the synthetic client's traffic alone it stays 0.
        expect.objectContaining({
          Expression: `IF(requests >= ${config.alarms.serverErrorMinRequests}, 100 * FILL(errors, 0) / requests, 0)`,
        }),
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
    // One transient 5xx among the fewest requests judged stays under the threshold.
    expect(100 / config.alarms.serverErrorMinRequests).toBeLessThan(config.alarms.serverErrorRatePercent);
    // What a cancelling client waits for: API Gateway's per-method figure, not the stage's, which
    // includes streamed lists whose latency lasts until their last byte.
    expect(alarmNamed('CancelLatencyP99')).toMatchObject({
      MetricName: 'Latency',
      Namespace: 'AWS/ApiGateway',
      ExtendedStatistic: 'p99',
      Dimensions: expect.arrayContaining([
        { Name: 'Method', Value: 'DELETE' },
        { Name: 'Resource', Value: '/v1/store/orders/{orderId}' },
        { Name: 'Stage', Value: stage },
      ]),
      Threshold: config.alarms.cancelP99LatencyMs,
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
    });
    // A v2 page's own threshold, chosen from the bench's page latency (docs/decisions.md#v2-list-access-paths).
    expect(alarmNamed('PagedListLatencyP99')).toMatchObject({
      MetricName: 'Latency',
      Namespace: 'AWS/ApiGateway',
      ExtendedStatistic: 'p99',
      Dimensions: expect.arrayContaining([
        { Name: 'Method', Value: 'GET' },
        { Name: 'Resource', Value: '/v2/store/orders' },
      ]),
      Threshold: config.alarms.pagedListP99LatencyMs,
      DatapointsToAlarm: 3,
    });
    expect(alarmNamed('ListFirstByteP99')).toMatchObject({
      MetricName: metricNames.listFirstByte,
      Namespace: 'StoreOrders',
      Dimensions: [{ Name: 'service', Value: `store-orders-${stage}` }],
      ExtendedStatistic: 'p99',
      Threshold: config.alarms.listFirstByteP99Ms,
    });
    const stageLatency = alarms().filter((alarm) => alarm.Properties.MetricName === 'Latency' && alarm.Properties.Dimensions.length === 2);
    expect(stageLatency).toEqual([]);
  });

  it('alarms when a list runs for 80% of its timeout', () => {
    expect(alarmNamed('ListOrdersNearTimeout')).toMatchObject({
      MetricName: 'Duration',
      Namespace: 'AWS/Lambda',
      Statistic: 'Maximum',
      Threshold: 0.8 * 900_000,
    });
  });

  it('alarms on errors and throttles of every function', () => {
    expect(alarmNamed('CancelOrderErrors')).toMatchObject({
      MetricName: 'Errors',
      Namespace: 'AWS/Lambda',
      Threshold: config.alarms.functionErrors,
    });
    // The list's: Lambda's Errors less the lists cut because their client stopped reading, not a failure of the function.
    const list = alarmNamed('ListOrdersErrors') as {
      Threshold: number;
      Metrics: { Id: string; Expression?: string; MetricStat?: unknown }[];
    };
    expect(list.Threshold).toBe(config.alarms.functionErrors);
    expect(list.Metrics.find((metric) => metric.Expression !== undefined)?.Expression).toBe('FILL(errors, 0) - FILL(stalled, 0)');
    expect(
      Object.fromEntries(list.Metrics.filter((metric) => metric.MetricStat !== undefined).map((m) => [m.Id, m.MetricStat])),
    ).toMatchObject({
      errors: { Metric: { Namespace: 'AWS/Lambda', MetricName: 'Errors' }, Stat: 'Sum' },
      stalled: {
        Metric: {
          Namespace: 'StoreOrders',
          MetricName: metricNames.stalledListsCut,
          Dimensions: [{ Name: 'service', Value: serviceName(config.stage) }],
        },
        Stat: 'Sum',
      },
    });
    for (const name of ['ListOrders', 'CancelOrder', 'Authorizer']) {
      expect(alarmNamed(`${name}Throttles`)).toMatchObject({ MetricName: 'Throttles', Namespace: 'AWS/Lambda', Threshold: 1 });
    }
  });

  it('counts authorizer failures from the access log (AUTHORIZER_FAILURE), not from Errors, which counts refused keys too', () => {
    t.hasResourceProperties('AWS::Logs::MetricFilter', {
      FilterPattern: '{ ($.errorResponseType = "AUTHORIZER_FAILURE") || ($.errorResponseType = "AUTHORIZER_CONFIGURATION_ERROR") }',
      MetricTransformations: [
        {
          MetricNamespace: 'StoreOrders',
          MetricName: metricNames.authorizerFailures,
          MetricValue: '1',
          Dimensions: [{ Key: 'service', Value: '$.service' }],
        },
      ],
    });
    expect(alarmNamed('AuthorizerFailures')).toMatchObject({
      MetricName: metricNames.authorizerFailures,
      Namespace: 'StoreOrders',
      Dimensions: [{ Name: 'service', Value: `store-orders-${config.stage}` }],
      Threshold: config.alarms.functionErrors,
    });
    expect(alarms().filter((alarm) => JSON.stringify(alarm.Properties).includes('AuthorizerFunction'))).toEqual(
      alarms().filter(
        (alarm) => alarm.Properties.MetricName === 'Throttles' && JSON.stringify(alarm.Properties).includes('AuthorizerFunction'),
      ),
    );
    expect(alarmNamed('AuthFailures')).toMatchObject({
      MetricName: metricNames.authFailures,
      Namespace: 'StoreOrders',
      Threshold: config.alarms.authFailures,
    });
  });

  it('counts 429s per route from the access log and graphs them per route on the dashboard', () => {
    t.hasResourceProperties('AWS::Logs::MetricFilter', {
      FilterPattern: '{ $.status = 429 }',
      MetricTransformations: [
        {
          MetricNamespace: 'StoreOrders',
          MetricName: metricNames.tooManyRequests,
          MetricValue: '1',
          Dimensions: [
            { Key: 'method', Value: '$.httpMethod' },
            { Key: 'resource', Value: '$.resourcePath' },
            { Key: 'service', Value: '$.service' },
          ],
        },
      ],
    });
    // The dashboard reads each route's metric with the dimensions the filter writes.
    const body = JSON.stringify(t.findResources('AWS::CloudWatch::Dashboard'));
    for (const route of routes) {
      const metric = [
        'StoreOrders',
        metricNames.tooManyRequests,
        'method',
        route.method,
        'resource',
        `/v1${route.path}`,
        'service',
        `store-orders-${stage}`,
      ];
      // The dashboard body is JSON inside a JSON string: quoted twice.
      expect(body).toContain(JSON.stringify(JSON.stringify(metric).slice(1, -1)).slice(1, -1));
    }
  });

  it('saves a query of throttled and quota-refused requests by key id', () => {
    const query = Object.values(t.findResources('AWS::Logs::QueryDefinition')).find((q) => q.Properties.Name === `${prefix}/limited-keys`)!;
    expect(query.Properties.QueryString).toContain("filter errorResponseType in ['THROTTLED', 'QUOTA_EXCEEDED']");
    expect(query.Properties.QueryString).toContain('stats count(*) as refused by principalId, errorResponseType, httpMethod, resourcePath');
    expect(query.Properties.LogGroupNames).toHaveLength(1);
  });

  it('sums DynamoDB metrics of several operations with FILL, so one silent operation does not silence the sum', () => {
    const expression = (id: string) =>
      ((alarmNamed(id)?.Metrics ?? []) as { Expression?: string }[]).find((m) => m.Expression !== undefined)?.Expression;
    expect(expression('OrdersTableThrottles')).toBe('FILL(scan, 0) + FILL(query, 0) + FILL(updateitem, 0)');
    expect(expression('OrdersTableSystemErrors')).toBe('FILL(scan, 0) + FILL(query, 0) + FILL(updateitem, 0)');
    expect(expression('ApiKeysTableThrottles')).toBe('FILL(getitem, 0)');
    // Every list writes its lease before its first byte and deletes it at its end.
    expect(expression('ListLeasesTableThrottles')).toBe('FILL(putitem, 0) + FILL(deleteitem, 0)');
    expect(expression('ListLeasesTableSystemErrors')).toBe('FILL(putitem, 0) + FILL(deleteitem, 0)');
    for (const alarm of alarms()) {
      for (const metric of (alarm.Properties.Metrics ?? []) as { Expression?: string; Id: string }[]) {
        if (metric.Expression === undefined) continue;
        // Every metric an expression adds appears inside FILL().
        const added = metric.Expression.split('+').map((term) => term.trim());
        if (added.length > 1) for (const term of added) expect(term).toMatch(/^FILL\(\w+, 0\)$/);
      }
    }
  });

  it('alarms on DynamoDB throttles and system errors of each of the three tables, read from that table', () => {
    const statsOf = (id: string) =>
      (
        (alarmNamed(id)?.Metrics ?? []) as {
          MetricStat?: { Metric: { MetricName: string; Dimensions: { Name: string; Value: unknown }[] } };
        }[]
      ).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []));
    const tables = t.findResources('AWS::DynamoDB::Table');
    expect(Object.keys(tables)).toHaveLength(3);
    for (const table of ['OrdersTable', 'ApiKeysTable', 'ListLeasesTable']) {
      const logical = Object.keys(tables).find((id) => id.startsWith(table))!;
      for (const [alarmId, metricName] of [
        [`${table}Throttles`, 'ThrottledRequests'],
        [`${table}SystemErrors`, 'SystemErrors'],
      ] as const) {
        const metrics = statsOf(alarmId);
        expect(metrics.length, alarmId).toBeGreaterThan(0);
        for (const metric of metrics) {
          expect(metric.MetricName).toBe(metricName);
          expect(metric.Dimensions).toContainEqual({ Name: 'TableName', Value: { Ref: logical } });
        }
      }
    }
  });

  // That CloudWatch may publish (and no other account's alarms) is evaluated by an IAM simulator: test/infra/iam.test.ts.
  it('has an alarm topic that accepts TLS publishing only', () => {
    t.resourceCountIs('AWS::SNS::Topic', 1);
    t.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
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
      [
        'auth-refusals',
        'cold-starts-and-memory',
        'errors',
        'gateway-errors',
        'limited-keys',
        'request-by-id',
        'slowest-dynamodb-calls',
        'slowest-requests',
      ].map((q) => `${prefix}/${q}`),
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
