import { Aws, Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { metricNames } from '../../../shared/observability.ts';
import { resourcePath } from '../../../shared/routes.ts';
import {
  apiMetric,
  dynamoDbCallMetric,
  dynamoDbOperations,
  functionLogGroups,
  functionMetric,
  latencyWatched,
  longRunning,
  period,
  reservingFunctions,
  serviceMetric,
  stageFunctions,
  tooManyRequestsOf,
} from './metrics.ts';
import { errorBudgetWidgets } from './slo.ts';
import { webAclName } from '../../names.ts';
import { type FirewallRule, firewallRuleMetricName, firewallRules } from '../stage-firewall.ts';
import type { StoreFunction } from '../store-function.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';

type Props = StoreOrdersMonitoringProps;

/** The stage's dashboard, one row of widgets after another, top to bottom. */
export function addDashboard(scope: Construct, props: Props, prefix: string, alarms: cloudwatch.IAlarm[]): cloudwatch.Dashboard {
  const dashboard = new cloudwatch.Dashboard(scope, 'Dashboard', { dashboardName: prefix, defaultInterval: Duration.hours(3) });
  dashboard.addWidgets(header(props, prefix));
  dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms, width: 24, height: 4 }));
  dashboard.addWidgets(...errorBudgetWidgets(props));
  dashboard.addWidgets(...trafficRow(props));
  dashboard.addWidgets(...firewallRow(props));
  dashboard.addWidgets(...listAndKeysRow(props));
  dashboard.addWidgets(...answersRow(props));
  dashboard.addWidgets(limitedRequestsRow(props));
  dashboard.addWidgets(...functionsRow(props));
  dashboard.addWidgets(tablesRow(props));
  dashboard.addWidgets(...dynamoDbCallsRow(props));
  dashboard.addWidgets(recentErrorsRow(props));
  return dashboard;
}

/** The console address of the dashboard addDashboard names `prefix`. */
export const dashboardUrl = (prefix: string) =>
  `https://${Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${prefix}`;

const graph = (title: string, left: cloudwatch.IMetric[], right: cloudwatch.IMetric[] = []) =>
  new cloudwatch.GraphWidget({ title, width: 8, left, right });

/** One line per function (the route functions and the authorizer). */
const perFunction = ({ routeFunctions, authorizer }: Props, title: string, metric: (fn: StoreFunction) => cloudwatch.Metric) =>
  graph(
    title,
    [...routeFunctions, { name: 'Authorizer', fn: authorizer }].map(({ name, fn }) => metric(fn).with({ label: name })),
  );

const header = ({ config }: Props, prefix: string) =>
  new cloudwatch.TextWidget({
    markdown: `# Store Orders — ${config.stage}\nAlarms are explained in docs/runbook.md. Logs: saved queries under "${prefix}/" in Logs Insights.`,
    width: 24,
    height: 2,
  });

function trafficRow(props: Props) {
  return [
    graph('Requests and errors', [
      apiMetric(props, 'Count', 'Sum').with({ label: 'requests' }),
      apiMetric(props, '4XXError', 'Sum').with({ label: '4xx' }),
      apiMetric(props, '5XXError', 'Sum').with({ label: '5xx' }),
    ]),
    // What a client of a buffered route waits (a streamed list's lasts until its last byte: its first byte is graphed below).
    ...latencyWatched(props)
      .filter(({ route }) => !route.streaming)
      .map(({ route, latency }) =>
        graph(`${latency.name} latency (ms)`, [
          apiMetric(props, 'Latency', 'p50', route).with({ label: 'p50' }),
          apiMetric(props, 'Latency', 'p99', route).with({ label: 'p99' }),
        ]),
      ),
    graph(
      'Orders',
      [
        serviceMetric(props, metricNames.ordersCancelled, 'Sum').with({ label: 'cancelled' }),
        serviceMetric(props, metricNames.cancelConflicts, 'Sum').with({ label: 'cancel conflicts (409)' }),
        serviceMetric(props, metricNames.ordersNotFound, 'Sum').with({ label: 'not found (404)' }),
        serviceMetric(props, metricNames.invalidStoredOrders, 'Sum').with({ label: 'invalid stored orders' }),
      ],
      [serviceMetric(props, metricNames.ordersListed, 'Sum').with({ label: 'orders listed' })],
    ),
  ];
}

/**
 * The stage's AWS WAF web ACL: what it let through and what it blocked, in all (`Rule` ALL) and by
 * rule (each rule's metric name): AWS/WAFV2 with the dimensions AWS WAF gives a regional web ACL,
 * Region, Rule and WebACL (AWS WAF developer guide, "AWS WAF metrics and dimensions").
 */
function firewallRow({ config }: Props) {
  const waf = (metricName: string, rule: string, label: string) =>
    new cloudwatch.Metric({
      namespace: 'AWS/WAFV2',
      metricName,
      dimensionsMap: { Region: Aws.REGION, Rule: rule, WebACL: webAclName(config.stage) },
      statistic: 'Sum',
      period,
      label,
    });
  return [
    new cloudwatch.GraphWidget({
      title: 'Firewall (AWS WAF): requests let through and blocked',
      width: 12,
      left: [waf('AllowedRequests', 'ALL', 'let through'), waf('BlockedRequests', 'ALL', 'blocked (429)')],
    }),
    new cloudwatch.GraphWidget({
      title: 'Firewall: blocked by rule (who: the web ACL’s sampled requests)',
      width: 12,
      left: (Object.keys(firewallRules) as FirewallRule[]).map((rule) =>
        waf('BlockedRequests', firewallRuleMetricName(config.stage, rule), firewallRules[rule]),
      ),
    }),
  ];
}

function listAndKeysRow(props: Props) {
  return [
    graph(
      'List: first byte and whole stream (ms)',
      [
        serviceMetric(props, metricNames.listFirstByte, 'p50').with({ label: 'first byte p50' }),
        serviceMetric(props, metricNames.listFirstByte, 'p99').with({ label: 'first byte p99' }),
        serviceMetric(props, metricNames.listDuration, 'p99').with({ label: 'whole list p99' }),
        ...longRunning(props).map(({ fn }) => fn.function.metricDuration({ statistic: 'Maximum', period, label: 'function duration max' })),
      ],
      // What the list's clients did, which its Errors guard leaves out (its contract's `errorsLessClientEnds`),
      // and the lists cut at their longest, which it counts.
      props.routeFunctions
        .filter(({ contract }) => contract.alarms.errorsLessClientEnds)
        .flatMap(({ contract }) => [
          functionMetric(props, contract.name, metricNames.stalledListsCut, 'Sum').with({ label: 'lists cut: client stopped reading' }),
          functionMetric(props, contract.name, metricNames.listsLeftEarly, 'Sum').with({ label: 'lists left by their client' }),
          functionMetric(props, contract.name, metricNames.listsRanTooLong, 'Sum').with({ label: 'lists cut: ran 14 minutes' }),
        ]),
    ),
    graph('Keys', [
      serviceMetric(props, metricNames.authFailures, 'Sum').with({ label: 'refused keys' }),
      serviceMetric(props, metricNames.authorizerFailures, 'Sum').with({ label: 'authorizer failures' }),
    ]),
    perFunction(props, 'Invocations', (fn) => fn.function.metricInvocations({ statistic: 'Sum', period })),
  ];
}

/**
 * Every version's answers per function, as the guards judge a new version's alone: its failures
 * (500s), the share it refuses (4xx but 429), its answer time; and the documented refusals,
 * judged against capacity, not as failures (lists and pages shed at their reserved concurrency,
 * filtered pages refused while the status index is not ready).
 */
function answersRow(props: Props) {
  const perFunction = (title: string, metricName: string, statistic: string, only?: (id: string) => boolean) =>
    graph(
      title,
      stageFunctions(props)
        .filter(({ id }) => only === undefined || only(id))
        .map(({ name, id }) => functionMetric(props, id, metricName, statistic).with({ label: name })),
    );
  const timed = new Set<string>(latencyWatched(props).map(({ route }) => route.operation));
  return [
    perFunction('Answers refused (4xx but 429, share)', metricNames.refusals, 'Average'),
    perFunction('Answers failed (500s)', metricNames.faults, 'Sum', (id) => id !== 'authorizer'),
    perFunction('Answer time p99 (ms; a list to its first byte)', metricNames.answerLatency, 'p99', (id) => timed.has(id)),
    graph('Documented refusals (retry later; not failures)', [
      ...reservingFunctions(props).map(({ name, fn }) =>
        fn.function.metricThrottles({ statistic: 'Sum', period, label: `${name} shed at its concurrency` }),
      ),
      serviceMetric(props, metricNames.statusIndexNotReady, 'Sum').with({ label: 'filtered pages: status index not ready' }),
      // Lists refused for their key's own full slots: the client's doing, shown, judged by no alarm.
      serviceMetric(props, metricNames.listsRefusedPerKey, 'Sum').with({ label: "lists refused: their key's slots full" }),
      // Each route's own 429s and 503s with Retry-After, every version's (BusyShare judges the new one's share).
      ...props.routeFunctions.map(({ name, contract }) =>
        functionMetric(props, contract.name, metricNames.busy, 'Sum').with({ label: `${name} answered busy` }),
      ),
    ]),
  ];
}

const limitedRequestsRow = (props: Props) =>
  new cloudwatch.GraphWidget({
    title: 'Limited requests (429) per route; who: saved query limited-keys',
    width: 24,
    left: props.routeFunctions.map(({ route }) =>
      tooManyRequestsOf(props, route).with({ label: `${route.method} ${resourcePath(route)}` }),
    ),
  });

const functionsRow = (props: Props) => [
  perFunction(props, 'Errors', (fn) => fn.function.metricErrors({ statistic: 'Sum', period })),
  perFunction(props, 'Throttles', (fn) => fn.function.metricThrottles({ statistic: 'Sum', period })),
  perFunction(props, 'Duration p99 (ms)', (fn) => fn.function.metricDuration({ statistic: 'p99', period })),
];

const tablesRow = ({ tables }: Props) =>
  new cloudwatch.GraphWidget({
    title: 'DynamoDB',
    width: 24,
    // Table-wide throttle events here; the alarms look at this service's operations one by one.
    left: tables.flatMap(({ id: tableId, table }) => [
      table.metric('ReadThrottleEvents', { statistic: 'Sum', period, label: `${tableId} read throttles` }),
      table.metric('WriteThrottleEvents', { statistic: 'Sum', period, label: `${tableId} write throttles` }),
    ]),
    right: tables.flatMap(({ id: tableId, table }) => [
      table.metricConsumedReadCapacityUnits({ statistic: 'Sum', period, label: `${tableId} read units` }),
      table.metricConsumedWriteCapacityUnits({ statistic: 'Sum', period, label: `${tableId} write units` }),
    ]),
  });

/** The functions' own view of DynamoDB (shared/dynamo-calls.ts): each call's time, retries included, and throttled attempts, per operation. */
const dynamoDbCallsRow = (props: Props) => {
  const perOperation = (metricName: string, statistic: string) =>
    dynamoDbOperations(props).map((operation) => dynamoDbCallMetric(props, metricName, operation, statistic).with({ label: operation }));
  return [
    new cloudwatch.GraphWidget({
      title: 'DynamoDB calls p99 (ms); slowest: saved query slowest-dynamodb-calls',
      width: 12,
      left: perOperation(metricNames.dynamoDbLatency, 'p99'),
    }),
    new cloudwatch.GraphWidget({
      title: 'DynamoDB throttled attempts',
      width: 12,
      left: perOperation(metricNames.dynamoDbThrottles, 'Sum'),
    }),
  ];
};

const recentErrorsRow = (props: Props) =>
  new cloudwatch.LogQueryWidget({
    title: 'Recent errors and warnings',
    width: 24,
    height: 6,
    logGroupNames: functionLogGroups(props).map((group) => group.logGroupName),
    queryLines: [
      'fields @timestamp, level, operation, request_id, outcome, message',
      "filter level in ['ERROR', 'WARN']",
      'sort @timestamp desc',
      'limit 50',
    ],
  });
