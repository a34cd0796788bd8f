import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { stages } from '../../infra/stage-config.ts';
import { StoreOrdersStack } from '../../infra/cdk/store-orders-stack.ts';
import { failingMinutesRule } from '../../infra/cdk/monitoring/metrics.ts';

/** The failing-minutes rule as the template writes it: 1 or more in 2 of the last 10 one-minute periods. */
const failingMinutes = { Threshold: 1, EvaluationPeriods: failingMinutesRule.of, DatapointsToAlarm: failingMinutesRule.failing };
import { metricNames } from '../../shared/observability.ts';
import { routes } from '../../infra/registry.ts';
import { cdkJsonContext, logicalId, repoRoot, stageNames, sharedApp, tempDir } from '../lib/cdk.ts';

const { template } = sharedApp();

/** Every alarm of a stage, by whom it tells: on-call at once (page) or the team the next working day (ticket). */
const alarmKinds: Record<string, 'page' | 'ticket'> = {
  Api5xxRate: 'page',
  CancelLatencyP99: 'page',
  ListFirstByteP99: 'page',
  PagedListLatencyP99: 'page',
  ListOrdersErrors: 'page',
  CancelOrderErrors: 'page',
  ListOrdersPagedErrors: 'page',
  AuthorizerErrors: 'page',
  ListOrdersRefusedShare: 'page',
  CancelOrderRefusedShare: 'page',
  ListOrdersPagedRefusedShare: 'page',
  AuthorizerRefusedShare: 'page',
  // Each route's new version answering busy far more than the old: a guard (the authorizer has no busy answer).
  ListOrdersBusyShare: 'page',
  CancelOrderBusyShare: 'page',
  ListOrdersPagedBusyShare: 'page',
  // Most of a reserving route's requests shed for a quarter of an hour: an outage, documented refusals or not.
  ListOrdersShedShare: 'page',
  ListOrdersPagedShedShare: 'page',
  AuthorizerFailures: 'page',
  CancelOrderThrottles: 'page',
  AuthorizerThrottles: 'page',
  // Capacity: lists and pages shed at their reserved concurrency, a list near its timeout.
  ListOrdersThrottles: 'ticket',
  ListOrdersPagedThrottles: 'ticket',
  ListOrdersNearTimeout: 'ticket',
  // Refused keys are their holders' problem: their owners are told, on-call is not woken.
  AuthFailures: 'ticket',
  OrdersTableThrottles: 'page',
  // Every writer's throttled writes, the store's other systems' too (monitoring/orders-writes.ts).
  OrdersTableWriteThrottles: 'page',
  OrdersTableSystemErrors: 'page',
  ApiKeysTableThrottles: 'page',
  ApiKeysTableSystemErrors: 'page',
  ListLeasesTableThrottles: 'page',
  ListLeasesTableSystemErrors: 'page',
  CanaryFailed: 'page',
  CanaryStopped: 'page',
  // The canary's own setup failing (its key, its probe order) pages apart from CanaryFailed, guarding nothing.
  CanarySetupFailed: 'page',
  // The probes busy in most runs check little: the team is told.
  ProbeBusy: 'ticket',
};
const alarmIds = Object.keys(alarmKinds);

describe.each(stageNames)('the %s monitoring', (stage) => {
  const config = stages[stage];
  const t = template(stage);
  const prefix = `StoreOrders-${stage}`;
  // The SLOs' window alarms notify nobody themselves: their composite alarms do (test/infra/slo.test.ts).
  const alarms = () =>
    Object.values(t.findResources('AWS::CloudWatch::Alarm')).filter((alarm) => !/Burn(Long|Short)$/.test(alarm.Properties.AlarmName));
  const alarmNamed = (id: string) => alarms().find((alarm) => alarm.Properties.AlarmName === `${prefix}-${id}`)?.Properties;

  it('has exactly the alarms the runbook explains, each notifying the paging or the ticket topic', () => {
    expect(
      alarms()
        .map((alarm) => alarm.Properties.AlarmName)
        .sort(),
    ).toEqual(alarmIds.map((id) => `${prefix}-${id}`).sort());
    const s = sharedApp().stack(stage);
    const topics = { page: logicalId(s, s.monitoring.alarmTopic), ticket: logicalId(s, s.monitoring.ticketTopic) };
    for (const alarm of alarms()) {
      const topic = topics[alarmKinds[String(alarm.Properties.AlarmName).slice(prefix.length + 1)]!];
      expect(alarm.Properties).toMatchObject({
        AlarmActions: [{ Ref: topic }],
        OKActions: [{ Ref: topic }],
        // No traffic is no fault; no canary run is (CanaryStopped).
        TreatMissingData: alarm.Properties.AlarmName === `${prefix}-CanaryStopped` ? 'breaching' : 'notBreaching',
        AlarmDescription: expect.stringContaining('docs/runbook.md'),
      });
    }
  });

  it('alarms on the share of failed answers, the 5xx less the documented refusals, in 5 minutes with enough requests', () => {
    const rate = alarmNamed('Api5xxRate') as {
      Threshold: number;
      Metrics: { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string } } }[];
    };
    expect(rate.Threshold).toBe(config.alarms.serverErrorRatePercent);
    const failed = '(FILL(errors, 0) - FILL(shed0, 0) - FILL(shed1, 0) - FILL(notReady, 0))';
    expect(rate.Metrics.find((metric) => metric.Expression !== undefined)!.Expression).toBe(
      `IF(requests >= ${config.alarms.serverErrorMinRequests}, 100 * (IF(${failed} > 0, ${failed}, 0)) / requests, 0)`,
    );
    const read = Object.fromEntries(
      rate.Metrics.filter((metric) => metric.MetricStat !== undefined).map((m) => [
        m.Id,
        `${m.MetricStat!.Metric.MetricName} ${JSON.stringify(m.MetricStat!.Metric)}`,
      ]),
    );
    expect(Object.keys(read).sort()).toEqual(['errors', 'notReady', 'requests', 'shed0', 'shed1']);
    expect(read.errors).toMatch(/^5XXError /);
    expect(read.requests).toMatch(/^Count /);
    // Lists and pages shed at their reserved concurrency by the live alias (not the pre-traffic
    // hook's direct invocations of a new version), and filtered pages refused while the status index backfills.
    expect(read.shed0).toMatch(/^Throttles .*ListOrdersFunction/);
    expect(read.shed1).toMatch(/^Throttles .*ListOrdersPagedFunction/);
    for (const shed of ['shed0', 'shed1']) {
      const metric = rate.Metrics.find((m) => m.Id === shed)!.MetricStat!.Metric as unknown as {
        Dimensions: { Name: string; Value: unknown }[];
      };
      const value = (name: string) => JSON.stringify(metric.Dimensions.find((d) => d.Name === name)?.Value);
      expect(metric.Dimensions.map(({ Name }) => Name).sort()).toEqual(['FunctionName', 'Resource']);
      expect(value('Resource')).toMatch(/:live"/);
      expect(value('Resource')).toContain(JSON.parse(value('FunctionName')).Ref);
    }
    expect(read.notReady).toMatch(new RegExp(`^${metricNames.statusIndexNotReady} `));
    // One transient 5xx among the fewest requests judged stays under the threshold.
    expect(100 / config.alarms.serverErrorMinRequests).toBeLessThan(config.alarms.serverErrorRatePercent);
    // Two of three 5-minute periods: a burst within one minute falls in one, and pages nobody.
    expect(alarmNamed('Api5xxRate')).toMatchObject({ EvaluationPeriods: 3, DatapointsToAlarm: 2 });
  });

  it('pages or guards on no single event: what it counts must come in 2 of 10 minutes, a share or a sum judges two periods', () => {
    // Alarms that count what should not happen at all: failures, throttles of functions that reserve nothing, DynamoDB's.
    const counting = alarms()
      .map((alarm) => alarm.Properties)
      .filter(
        (p) =>
          /(Errors|Failures|SystemErrors|WriteThrottles)$|(CancelOrder|Authorizer|Table)Throttles$/.test(p.AlarmName) &&
          !/AuthFailures$/.test(p.AlarmName),
      );
    expect(counting.length).toBe(4 + 1 + 2 + 3 * 2 + 1);
    for (const p of counting) {
      expect(p, p.AlarmName).toMatchObject(failingMinutes);
      const periods = [p.Period, ...((p.Metrics ?? []) as { MetricStat?: { Period: number } }[]).map((m) => m.MetricStat?.Period)];
      expect(new Set(periods.filter((period) => period !== undefined)), p.AlarmName).toEqual(new Set([60]));
    }
    // Every other alarm that notifies judges two periods or more, but the list's longest run (a maximum, a ticket).
    const single = alarms()
      .map((alarm) => alarm.Properties)
      .filter((p) => p.EvaluationPeriods < 2)
      .map((p) => String(p.AlarmName).slice(prefix.length + 1));
    expect(single).toEqual(['ListOrdersNearTimeout']);
  });

  it('pages when a reserving route sheds half or more of its requests (10 or more) in three of the last four 5-minute periods', () => {
    const shed = (id: string) =>
      alarmNamed(id) as {
        Threshold: number;
        EvaluationPeriods: number;
        DatapointsToAlarm?: number;
        Metrics: { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string; Dimensions: { Name: string }[] } } }[];
      };
    for (const [id, expression] of [
      ['ListOrdersShedShare', 'IF(FILL(requests, 0) >= 10, 100 * (FILL(throttles, 0)) / requests, 0)'],
      ['ListOrdersPagedShedShare', 'IF(FILL(requests, 0) >= 10, 100 * (FILL(throttles, 0)) / requests, 0)'],
    ] as const) {
      const alarm = shed(id);
      expect(alarm).toMatchObject({ Threshold: 50, EvaluationPeriods: 4, DatapointsToAlarm: 3 });
      expect(alarm.Metrics.find((metric) => metric.Expression !== undefined)!.Expression).toBe(expression);
      const read = Object.fromEntries(alarm.Metrics.filter((m) => m.MetricStat).map((m) => [m.Id, m.MetricStat!.Metric]));
      expect(read.throttles!.MetricName).toBe('Throttles');
      expect(read.throttles!.Dimensions.map(({ Name }) => Name).sort()).toEqual(['FunctionName', 'Resource']);
      expect(read.requests!.MetricName).toBe('Count');
      expect(read.requests!.Dimensions.map(({ Name }) => Name).sort()).toEqual(['ApiName', 'Method', 'Resource', 'Stage']);
      if (read.full !== undefined) expect(read.full.MetricName).toBe(metricNames.listsRefusedPerKey);
    }
  });

  it('tickets the probes found busy in 8 of the last 15 minutes', () => {
    expect(alarmNamed('ProbeBusy')).toMatchObject({
      MetricName: metricNames.probeBusy,
      Namespace: 'StoreOrders/Probes',
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 1,
      EvaluationPeriods: 15,
      DatapointsToAlarm: 8,
      Dimensions: [{ Name: 'service', Value: `store-orders-${stage}` }],
    });
  });

  it('tells the team, not on-call, when a list runs for 80% of its timeout', () => {
    expect(alarmNamed('ListOrdersNearTimeout')).toMatchObject({
      MetricName: 'Duration',
      Namespace: 'AWS/Lambda',
      Statistic: 'Maximum',
      Threshold: 0.8 * 900_000,
    });
  });

  it('pages on throttles of a function that reserves nothing in 2 of 10 minutes, and tickets a reserving one that sheds load for half an hour', () => {
    for (const name of ['CancelOrder', 'Authorizer'])
      expect(alarmNamed(`${name}Throttles`)).toMatchObject({
        MetricName: 'Throttles',
        Namespace: 'AWS/Lambda',
        Period: 60,
        ...failingMinutes,
      });
    for (const name of ['ListOrders', 'ListOrdersPaged'])
      expect(alarmNamed(`${name}Throttles`)).toMatchObject({
        MetricName: 'Throttles',
        Namespace: 'AWS/Lambda',
        Threshold: 1,
        Period: 300,
        EvaluationPeriods: 6,
        DatapointsToAlarm: 3,
      });
  });

  it('counts authorizer failures from the access log (AUTHORIZER_FAILURE), and refused keys as a ticket', () => {
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
      Period: 60,
      ...failingMinutes,
    });
    expect(alarmNamed('AuthFailures')).toMatchObject({
      MetricName: metricNames.authFailures,
      Namespace: 'StoreOrders',
      Threshold: config.alarms.authFailures,
      EvaluationPeriods: 2,
      DatapointsToAlarm: 1,
    });
    // No metric filter counts the access log's 401s any more: a request refused before the authorizer ran moves nothing.
    expect(JSON.stringify(t.findResources('AWS::Logs::MetricFilter'))).not.toContain('401');
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
    // Every expression of any alarm gives the same states whether a missing datapoint counts as 0 or as none:
    // the alarm evaluator checks it (test/shipped/alarm-scenarios.test.ts). Here, the sums' shape.
    for (const alarm of alarms().filter((candidate) => /Table(Throttles|SystemErrors)$/.test(candidate.Properties.AlarmName))) {
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
  it('has a paging and a ticket topic, each accepting TLS publishing only', () => {
    t.resourceCountIs('AWS::SNS::Topic', 2);
    const policies = Object.values(t.findResources('AWS::SNS::TopicPolicy'));
    expect(policies).toHaveLength(2);
    for (const policy of policies)
      expect(policy.Properties.PolicyDocument.Statement).toEqual(
        expect.arrayContaining([expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      );
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
