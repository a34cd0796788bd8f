import { Aws, Duration } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { metricNames, metricsNamespace } from '../shared/observability.ts';
import { type StageConfig, serviceName } from './stage-config.ts';
import type { StoreFunction } from './store-function.ts';

export interface StoreOrdersMonitoringProps {
  readonly config: StageConfig;
  readonly api: apigw.RestApi;
  readonly accessLogs: logs.ILogGroup;
  /** The route functions, each under the name its alarms and graphs use (e.g. ListOrders). */
  readonly routeFunctions: readonly { readonly name: string; readonly fn: StoreFunction }[];
  readonly authorizer: StoreFunction;
  /** Each table with the operations this service performs on it (DynamoDB reports throttles per operation). */
  readonly tables: readonly { readonly id: string; readonly table: dynamodb.Table; readonly operations: dynamodb.Operation[] }[];
}

const period = Duration.minutes(5);

/**
 * What on-call sees of one stage: an SNS topic that every alarm notifies, the alarms that
 * docs/runbook.md explains (one section per alarm id), a dashboard, and saved Logs Insights queries.
 */
export class StoreOrdersMonitoring extends Construct {
  readonly alarmTopic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;
  readonly dashboardUrl: string;

  constructor(scope: Construct, id: string, props: StoreOrdersMonitoringProps) {
    super(scope, id);
    const { config, api, authorizer, routeFunctions, tables } = props;
    const stage = api.deploymentStage;
    const prefix = `StoreOrders-${config.stage}`;
    // The functions' EMF metrics (shared/observability.ts); Powertools sets the `service` dimension per stage.
    const serviceMetric = (metricName: string, statistic: string) =>
      new cloudwatch.Metric({
        namespace: metricsNamespace,
        metricName,
        dimensionsMap: { service: serviceName(config) },
        statistic,
        period,
      });

    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', { displayName: `Store Orders ${config.stage} alarms`, enforceSSL: true });
    if (config.alarms.email !== undefined) this.alarmTopic.addSubscription(new subscriptions.EmailSubscription(config.alarms.email));

    const alarm = (alarmId: string, what: string, options: Omit<cloudwatch.AlarmProps, 'alarmName' | 'alarmDescription'>) => {
      const created = new cloudwatch.Alarm(this, alarmId, {
        alarmName: `${prefix}-${alarmId}`,
        alarmDescription: `${what} Runbook: docs/runbook.md, section "${alarmId}".`,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        // No traffic is not a problem.
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        ...options,
      });
      created.addAlarmAction(new SnsAction(this.alarmTopic));
      created.addOkAction(new SnsAction(this.alarmTopic));
      this.alarms.push(created);
      return created;
    };

    // The API as clients see it (gateway responses included, e.g. authorizer failures as 500).
    alarm('Api5xxRate', `${config.alarms.serverErrorRatePercent}% or more of the requests in 5 minutes were answered with a 5xx status.`, {
      metric: new cloudwatch.MathExpression({
        label: '5xx rate (%)',
        expression: '100 * FILL(errors, 0) / requests',
        usingMetrics: {
          errors: stage.metricServerError({ statistic: 'Sum', period }),
          requests: stage.metricCount({ statistic: 'Sum', period }),
        },
        period,
      }),
      threshold: config.alarms.serverErrorRatePercent,
      evaluationPeriods: 1,
    });
    alarm('ApiLatencyP99', `p99 latency at or above ${config.alarms.p99LatencyMs} ms for 15 minutes.`, {
      metric: stage.metricLatency({ statistic: 'p99', period }),
      threshold: config.alarms.p99LatencyMs,
      evaluationPeriods: 3,
    });

    for (const { name, fn } of routeFunctions) {
      alarm(`${name}Errors`, `The ${name} function failed ${config.alarms.functionErrors}+ times in 5 minutes.`, {
        metric: fn.function.metricErrors({ statistic: 'Sum', period }),
        threshold: config.alarms.functionErrors,
        evaluationPeriods: 1,
      });
    }
    // The authorizer refuses a key by throwing "Unauthorized", which Lambda counts as an error;
    // only the errors beyond the refusals it counted itself are failures.
    alarm('AuthorizerErrors', `The authorizer failed ${config.alarms.functionErrors}+ times in 5 minutes (refused keys not counted).`, {
      metric: new cloudwatch.MathExpression({
        label: 'authorizer errors other than refusals',
        expression: 'FILL(errors, 0) - FILL(refusals, 0)',
        usingMetrics: {
          errors: authorizer.function.metricErrors({ statistic: 'Sum', period }),
          refusals: serviceMetric(metricNames.authFailures, 'Sum'),
        },
        period,
      }),
      threshold: config.alarms.functionErrors,
      evaluationPeriods: 1,
    });
    const functions = [...routeFunctions, { name: 'Authorizer', fn: authorizer }];
    for (const { name, fn } of functions) {
      alarm(`${name}Throttles`, `Lambda throttled the ${name} function.`, {
        metric: fn.function.metricThrottles({ statistic: 'Sum', period }),
        threshold: 1,
        evaluationPeriods: 1,
      });
    }
    alarm('AuthFailures', `${config.alarms.authFailures}+ requests with an unknown or revoked key in 5 minutes.`, {
      metric: serviceMetric(metricNames.authFailures, 'Sum'),
      threshold: config.alarms.authFailures,
      evaluationPeriods: 1,
    });

    // On-demand tables rarely throttle: any throttle or DynamoDB-side error is news.
    for (const { id: tableId, table, operations } of tables) {
      alarm(`${tableId}Throttles`, `DynamoDB throttled requests of this service to ${tableId}.`, {
        metric: table.metricThrottledRequestsForOperations({ operations, period }),
        threshold: 1,
        evaluationPeriods: 1,
      });
      alarm(`${tableId}SystemErrors`, `DynamoDB answered requests of this service to ${tableId} with a server error.`, {
        metric: table.metricSystemErrorsForOperations({ operations, period }),
        threshold: 1,
        evaluationPeriods: 1,
      });
    }

    const functionLogGroups = functions.map(({ fn }) => fn.logGroup);

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: prefix, defaultInterval: Duration.hours(3) });
    const perFunction = (title: string, metric: (fn: StoreFunction) => cloudwatch.Metric) =>
      new cloudwatch.GraphWidget({ title, width: 8, left: functions.map(({ name, fn }) => metric(fn).with({ label: name })) });
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `# Store Orders — ${config.stage}\nAlarms are explained in docs/runbook.md. Logs: saved queries under "${prefix}/" in Logs Insights.`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 4 }));
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Requests and errors',
        width: 8,
        left: [
          stage.metricCount({ statistic: 'Sum', period, label: 'requests' }),
          stage.metricClientError({ statistic: 'Sum', period, label: '4xx' }),
          stage.metricServerError({ statistic: 'Sum', period, label: '5xx' }),
        ],
      }),
      new cloudwatch.GraphWidget({
        title: 'Latency (ms)',
        width: 8,
        left: [
          stage.metricLatency({ statistic: 'p50', period, label: 'p50' }),
          stage.metricLatency({ statistic: 'p99', period, label: 'p99' }),
          stage.metricIntegrationLatency({ statistic: 'p99', period, label: 'integration p99' }),
        ],
      }),
      new cloudwatch.GraphWidget({
        title: 'Orders',
        width: 8,
        left: [
          serviceMetric(metricNames.ordersCancelled, 'Sum').with({ label: 'cancelled' }),
          serviceMetric(metricNames.cancelConflicts, 'Sum').with({ label: 'cancel conflicts (409)' }),
          serviceMetric(metricNames.ordersNotFound, 'Sum').with({ label: 'not found (404)' }),
          serviceMetric(metricNames.authFailures, 'Sum').with({ label: 'refused keys' }),
          serviceMetric(metricNames.invalidStoredOrders, 'Sum').with({ label: 'invalid stored orders' }),
        ],
        right: [serviceMetric(metricNames.ordersListed, 'Sum').with({ label: 'orders listed' })],
      }),
    );
    this.dashboard.addWidgets(
      perFunction('Invocations', (fn) => fn.function.metricInvocations({ statistic: 'Sum', period })),
      perFunction('Errors', (fn) => fn.function.metricErrors({ statistic: 'Sum', period })),
      perFunction('Throttles', (fn) => fn.function.metricThrottles({ statistic: 'Sum', period })),
    );
    this.dashboard.addWidgets(
      perFunction('Duration p99 (ms)', (fn) => fn.function.metricDuration({ statistic: 'p99', period })),
      new cloudwatch.GraphWidget({
        title: 'List duration (ms)',
        width: 8,
        left: [
          serviceMetric(metricNames.listDuration, 'p50').with({ label: 'p50' }),
          serviceMetric(metricNames.listDuration, 'p99').with({ label: 'p99' }),
        ],
      }),
      new cloudwatch.GraphWidget({
        title: 'DynamoDB',
        width: 8,
        // Table-wide throttle events here; the alarms look at this service's operations one by one.
        left: tables.flatMap(({ id: tableId, table }) => [
          table.metric('ReadThrottleEvents', { statistic: 'Sum', period, label: `${tableId} read throttles` }),
          table.metric('WriteThrottleEvents', { statistic: 'Sum', period, label: `${tableId} write throttles` }),
        ]),
        right: tables.flatMap(({ id: tableId, table }) => [
          table.metricConsumedReadCapacityUnits({ statistic: 'Sum', period, label: `${tableId} read units` }),
          table.metricConsumedWriteCapacityUnits({ statistic: 'Sum', period, label: `${tableId} write units` }),
        ]),
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.LogQueryWidget({
        title: 'Recent errors and warnings',
        width: 24,
        height: 6,
        logGroupNames: functionLogGroups.map((group) => group.logGroupName),
        queryLines: [
          'fields @timestamp, level, operation, request_id, outcome, message',
          "filter level in ['ERROR', 'WARN']",
          'sort @timestamp desc',
          'limit 50',
        ],
      }),
    );
    this.dashboardUrl = `https://${Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${prefix}`;

    // Saved Logs Insights queries (CloudWatch → Logs Insights → Saved queries → "<prefix>/…").
    const query = (queryId: string, logGroups: logs.ILogGroup[], queryString: logs.QueryString) =>
      new logs.QueryDefinition(this, `Query-${queryId}`, { queryDefinitionName: `${prefix}/${queryId}`, logGroups, queryString });
    query(
      'errors',
      functionLogGroups,
      new logs.QueryString({
        fields: ['@timestamp', 'level', 'operation', 'request_id', 'order_id', 'outcome', 'statusCode', 'message', 'error.message'],
        filterStatements: ["level in ['ERROR', 'WARN']"],
        sort: '@timestamp desc',
        limit: 100,
      }),
    );
    query(
      'request-by-id',
      [...functionLogGroups, props.accessLogs],
      new logs.QueryString({
        fields: ['@timestamp', '@log', 'level', 'message', 'outcome', 'status', 'statusCode', 'latencyMs', 'responseLatency'],
        // Paste the X-Request-Id a client quotes.
        filterStatements: ["request_id = 'PASTE-X-REQUEST-ID' or requestId = 'PASTE-X-REQUEST-ID'"],
        sort: '@timestamp asc',
      }),
    );
    query(
      'gateway-errors',
      [props.accessLogs],
      new logs.QueryString({
        filterStatements: ['status >= 400'],
        statsStatements: ['count(*) as requests by status, errorResponseType, authorizerError, integrationError'],
        sort: 'requests desc',
      }),
    );
    query(
      'slowest-requests',
      [props.accessLogs],
      new logs.QueryString({
        fields: ['@timestamp', 'requestId', 'httpMethod', 'path', 'status', 'responseLatency', 'integrationLatency', 'authorizerLatency'],
        sort: 'responseLatency desc',
        limit: 50,
      }),
    );
    query(
      'auth-refusals',
      [authorizer.logGroup],
      new logs.QueryString({
        filterStatements: ["message = 'authorization refused'"],
        statsStatements: ['count(*) as refusals by reason, bin(5m)'],
      }),
    );
    query(
      'cold-starts-and-memory',
      functionLogGroups,
      new logs.QueryString({
        filterStatements: ["@type = 'REPORT'"],
        statsStatements: [
          'count(*) as invocations, sum(ispresent(@initDuration)) as coldStarts, pct(@duration, 99) as p99DurationMs, max(@maxMemoryUsed / 1000 / 1000) as maxMemoryMB by @log',
        ],
      }),
    );
  }
}
