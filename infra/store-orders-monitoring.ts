import { Aws, Duration } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { metricNames, metricsNamespace } from '../shared/observability.ts';
import { basePath, type Route, type routes } from '../shared/routes.ts';
import { operations } from './operations.ts';
import { type StageConfig, serviceName } from './stage-config.ts';
import type { StoreFunction } from './store-function.ts';

export interface StoreOrdersMonitoringProps {
  readonly config: StageConfig;
  readonly api: apigw.RestApi;
  readonly accessLogs: logs.ILogGroup;
  /** The route functions, each under the name its alarms and graphs use (e.g. ListOrders). */
  readonly routeFunctions: readonly { readonly name: string; readonly route: (typeof routes)[number]; readonly fn: StoreFunction }[];
  readonly authorizer: StoreFunction;
  /** The stage's Synthetics canary (infra/release-checks.ts), by name. */
  readonly canaryName: string;
  /** Each table with the operations this service performs on it (DynamoDB reports throttles per operation). */
  readonly tables: readonly { readonly id: string; readonly table: dynamodb.Table; readonly operations: dynamodb.Operation[] }[];
}

const period = Duration.minutes(5);
/** The latency guards' period: short enough to go off inside a canary's bake with several datapoints. */
const latencyPeriod = Duration.minutes(1);

/** A long-running function (the list) may run this close to its timeout before on-call hears of it. */
const nearTimeoutShare = 0.8;

/** A sum of metrics in which an operand without datapoints counts as 0, not as "no sum". */
const filledSum = (label: string, metrics: Record<string, cloudwatch.IMetric>) =>
  new cloudwatch.MathExpression({
    label,
    expression: Object.keys(metrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + '),
    usingMetrics: metrics,
    period,
  });

/**
 * What on-call sees of one stage: an SNS topic that every alarm notifies, the alarms that
 * docs/runbook.md explains (one section per alarm id), a dashboard, and saved Logs Insights
 * queries. Each alarm fires on the fault its name says and only then: a refused key is not an
 * authorizer failure, and a long list is not a slow API.
 */
export class StoreOrdersMonitoring extends Construct {
  readonly alarmTopic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];
  /**
   * The alarms a bad release would set off: CodeDeploy watches them while it shifts traffic to
   * a new version and rolls back when one goes off (at most 10 per deployment group).
   */
  readonly guardAlarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;
  readonly dashboardUrl: string;
  private readonly props: StoreOrdersMonitoringProps;
  private readonly prefix: string;

  constructor(scope: Construct, id: string, props: StoreOrdersMonitoringProps) {
    super(scope, id);
    this.props = props;
    this.prefix = `StoreOrders-${props.config.stage}`;

    this.alarmTopic = new sns.Topic(this, 'AlarmTopic', { displayName: `Store Orders ${props.config.stage} alarms`, enforceSSL: true });
    this.allowAlarmsToPublish();
    if (props.config.alarms.email !== undefined)
      this.alarmTopic.addSubscription(new subscriptions.EmailSubscription(props.config.alarms.email));

    this.addApiAlarms();
    this.addFunctionAlarms();
    this.addAuthorizerAlarms();
    this.addLimitedRequestsFilter();
    this.addWrongAnswerAlarms();
    this.addTableAlarms();
    this.dashboard = this.addDashboard();
    this.dashboardUrl = `https://${Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${this.prefix}`;
    this.addQueries();
  }

  /**
   * A topic policy replaces SNS's default one, and `enforceSSL` writes one holding only its Deny:
   * without this Allow, CloudWatch may not publish and no alarm reaches anyone. Only this stage's
   * alarms (their names start with the prefix), in this account and region, may publish.
   */
  private allowAlarmsToPublish() {
    this.alarmTopic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'StageAlarmsPublish',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.alarmTopic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
          ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:cloudwatch:${Aws.REGION}:${Aws.ACCOUNT_ID}:alarm:${this.prefix}-*` },
        },
      }),
    );
  }

  /** One of the service's own metrics (shared/observability.ts), with the stage's `service` dimension. */
  serviceMetric(metricName: string, statistic: string): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: metricsNamespace,
      metricName,
      dimensionsMap: { service: serviceName(this.props.config) },
      statistic,
      period,
    });
  }

  /**
   * API Gateway's metric of the stage, or of one method (the stage enables per-method metrics for
   * every route). The dimensions are the names themselves, not references to the API's stage: the
   * deploy guards read these alarms, and CloudFormation would otherwise find a cycle (alarm → stage
   * → authorizer → live alias → its deployment group → alarm).
   */
  apiMetric(metricName: string, statistic: string, route?: Route): cloudwatch.Metric {
    const { api, config } = this.props;
    return new cloudwatch.Metric({
      namespace: 'AWS/ApiGateway',
      metricName,
      dimensionsMap: {
        ApiName: api.restApiName,
        Stage: config.stage,
        ...(route === undefined ? {} : { Resource: `${basePath}${route.path}`, Method: route.method }),
      },
      statistic,
      period,
    });
  }

  private alarm(
    alarmId: string,
    what: string,
    options: Omit<cloudwatch.AlarmProps, 'alarmName' | 'alarmDescription'>,
    { guardsDeploys = false }: { guardsDeploys?: boolean } = {},
  ) {
    const created = new cloudwatch.Alarm(this, alarmId, {
      alarmName: `${this.prefix}-${alarmId}`,
      alarmDescription: `${what} Runbook: docs/runbook.md, section "${alarmId}".`,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // No traffic is not a problem.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      ...options,
    });
    created.addAlarmAction(new SnsAction(this.alarmTopic));
    created.addOkAction(new SnsAction(this.alarmTopic));
    this.alarms.push(created);
    if (guardsDeploys) this.guardAlarms.push(created);
    return created;
  }

  /** The route functions whose entry in infra/operations.ts asks for a near-timeout alarm. */
  private longRunning() {
    return this.props.routeFunctions.filter(({ route }) => operations[route.operation].alarms.nearTimeout !== undefined);
  }

  /** The routes whose entry in infra/operations.ts asks for a latency alarm (buffered routes: the client waits for the whole answer). */
  private latencyWatched() {
    return this.props.routeFunctions.flatMap(({ route }) => {
      const latency = operations[route.operation].alarms.latencyP99;
      return latency === undefined ? [] : [{ route, latency }];
    });
  }

  /** The API as clients see it: errors over all routes; latency per route, as each route's client waits. */
  private addApiAlarms() {
    const { config } = this.props;
    this.alarm(
      'Api5xxRate',
      `${config.alarms.serverErrorRatePercent}% or more of the requests in 5 minutes were answered with a 5xx status.`,
      {
        metric: new cloudwatch.MathExpression({
          label: '5xx rate (%)',
          expression: '100 * FILL(errors, 0) / requests',
          usingMetrics: {
            errors: this.apiMetric('5XXError', 'Sum'),
            requests: this.apiMetric('Count', 'Sum'),
          },
          period,
        }),
        threshold: config.alarms.serverErrorRatePercent,
        evaluationPeriods: 1,
      },
      { guardsDeploys: true },
    );
    // A cancel's latency is what its client waits for; a streamed list's lasts until its last byte, so the list is judged apart.
    // Three 1-minute periods out of five: slow minutes of cold starts alone do not set it off, and
    // it reaches ALARM within the canary's bake (test/infra/guard-alarms.test.ts does the arithmetic).
    for (const { route, latency } of this.latencyWatched()) {
      const thresholdMs = config.alarms[latency.threshold];
      this.alarm(
        `${latency.name}LatencyP99`,
        `p99 latency of ${route.method} at or above ${thresholdMs} ms in three of five 1-minute periods.`,
        {
          metric: this.apiMetric('Latency', 'p99', route).with({ period: latencyPeriod }),
          threshold: thresholdMs,
          evaluationPeriods: 5,
          datapointsToAlarm: 3,
        },
        { guardsDeploys: true },
      );
    }
    this.alarm(
      'ListFirstByteP99',
      `p99 time to the list's first byte at or above ${config.alarms.listFirstByteP99Ms} ms in three of five 1-minute periods.`,
      {
        metric: this.serviceMetric(metricNames.listFirstByte, 'p99').with({ period: latencyPeriod }),
        threshold: config.alarms.listFirstByteP99Ms,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
      },
      { guardsDeploys: true },
    );
  }

  private addFunctionAlarms() {
    const { config, routeFunctions, authorizer } = this.props;
    for (const { name, fn } of routeFunctions) {
      // The route functions turn every error into a response: an Errors datapoint is a crash, a timeout or a cut stream.
      this.alarm(
        `${name}Errors`,
        `The ${name} function failed ${config.alarms.functionErrors}+ times in 5 minutes.`,
        { metric: fn.function.metricErrors({ statistic: 'Sum', period }), threshold: config.alarms.functionErrors, evaluationPeriods: 1 },
        { guardsDeploys: true },
      );
    }
    // A long-running operation (its entry in infra/operations.ts) also alarms before it reaches its timeout.
    for (const { name, route, fn } of this.longRunning()) {
      const timeoutMs = operations[route.operation].function.timeoutSeconds * 1000;
      this.alarm(
        `${name}NearTimeout`,
        `${operations[route.operation].alarms.nearTimeout!.invocation} ran for ${nearTimeoutShare * 100}% or more of its ${timeoutMs / 60_000}-minute timeout.`,
        {
          metric: fn.function.metricDuration({ statistic: 'Maximum', period }),
          threshold: timeoutMs * nearTimeoutShare,
          evaluationPeriods: 1,
        },
      );
    }
    for (const { name, fn } of [...routeFunctions, { name: 'Authorizer', fn: authorizer }]) {
      this.alarm(`${name}Throttles`, `Lambda throttled the ${name} function.`, {
        metric: fn.function.metricThrottles({ statistic: 'Sum', period }),
        threshold: 1,
        evaluationPeriods: 1,
      });
    }
  }

  /**
   * The authorizer refuses a key by throwing "Unauthorized", which Lambda counts in Errors: an
   * alarm on Errors would page on every wrong key. A failure is what API Gateway reports as
   * AUTHORIZER_FAILURE or AUTHORIZER_CONFIGURATION_ERROR (a crash, a timeout, DynamoDB down),
   * counted from the access log. Refused keys have their own alarm, at a volume that matters.
   */
  private addAuthorizerAlarms() {
    const { config, accessLogs } = this.props;
    new logs.MetricFilter(this, 'AuthorizerFailuresFilter', {
      logGroup: accessLogs,
      filterPattern: logs.FilterPattern.any(
        logs.FilterPattern.stringValue('$.errorResponseType', '=', 'AUTHORIZER_FAILURE'),
        logs.FilterPattern.stringValue('$.errorResponseType', '=', 'AUTHORIZER_CONFIGURATION_ERROR'),
      ),
      metricNamespace: metricsNamespace,
      metricName: metricNames.authorizerFailures,
      metricValue: '1',
      dimensions: { service: '$.service' },
    });
    this.alarm(
      'AuthorizerFailures',
      `The authorizer failed ${config.alarms.functionErrors}+ times in 5 minutes (refused keys not counted).`,
      { metric: this.serviceMetric(metricNames.authorizerFailures, 'Sum'), threshold: config.alarms.functionErrors, evaluationPeriods: 1 },
      { guardsDeploys: true },
    );
    this.alarm('AuthFailures', `${config.alarms.authFailures}+ requests with an unknown or revoked key in 5 minutes.`, {
      metric: this.serviceMetric(metricNames.authFailures, 'Sum'),
      threshold: config.alarms.authFailures,
      evaluationPeriods: 1,
    });
  }

  /**
   * Alarms for a service that answers, but wrongly (guards too, so a release doing it rolls back):
   * the synthetic client's runs failing (docs/runbook.md, "CanaryFailed"), and a jump in the share
   * of requests refused with 401, counted from the access log ("RefusedShare"). Both judge 1-minute
   * periods, two in a row, so either can stop the 15-minute canary deployment.
   */
  private addWrongAnswerAlarms() {
    const { config, accessLogs, canaryName } = this.props;
    const minute = Duration.minutes(1);
    this.alarm(
      'CanaryFailed',
      `The synthetic client (Synthetics canary ${canaryName}) failed two runs in a row: the stage answers its read-only checks wrongly or not at all.`,
      {
        metric: new cloudwatch.Metric({
          namespace: 'CloudWatchSynthetics',
          metricName: 'SuccessPercent',
          dimensionsMap: { CanaryName: canaryName },
          statistic: 'Average',
          period: minute,
        }),
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        threshold: 100,
        evaluationPeriods: 2,
        datapointsToAlarm: 2,
      },
      { guardsDeploys: true },
    );
    // CanaryFailed sees no data when no run happens, and no data is not breaching there (a quiet
    // stage is fine): a canary that stopped, or cannot start, would leave the stage unwatched.
    this.alarm(
      'CanaryStopped',
      `The synthetic client (Synthetics canary ${canaryName}) has not completed a run for 10 minutes: nothing checks the stage's answers.`,
      {
        metric: new cloudwatch.Metric({
          namespace: 'CloudWatchSynthetics',
          metricName: 'SuccessPercent',
          dimensionsMap: { CanaryName: canaryName },
          statistic: 'SampleCount',
          period: Duration.minutes(5),
        }),
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        threshold: 1,
        evaluationPeriods: 2,
        datapointsToAlarm: 2,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      },
    );
    const count = (id: string, metricName: string, filterPattern: logs.IFilterPattern) => {
      new logs.MetricFilter(this, id, {
        logGroup: accessLogs,
        filterPattern,
        metricNamespace: metricsNamespace,
        metricName,
        metricValue: '1',
        dimensions: { service: '$.service' },
      });
      return this.serviceMetric(metricName, 'Sum').with({ period: minute });
    };
    const { percent, minRequests } = config.alarms.refusedShare;
    this.alarm(
      'RefusedShare',
      `${percent}% or more of the requests were refused with 401 in two 1-minute periods in a row (minutes with ${minRequests}+ requests).`,
      {
        metric: new cloudwatch.MathExpression({
          label: 'refused with 401 (%)',
          expression: `IF(requests >= ${minRequests}, 100 * FILL(refused, 0) / requests, 0)`,
          usingMetrics: {
            refused: count('RefusedRequestsFilter', metricNames.refusedRequests, logs.FilterPattern.numberValue('$.status', '=', 401)),
            requests: count('RequestsFilter', metricNames.requests, logs.FilterPattern.numberValue('$.status', '>', 0)),
          },
          period: minute,
        }),
        threshold: percent,
        evaluationPeriods: 2,
        datapointsToAlarm: 2,
      },
      { guardsDeploys: true },
    );
  }

  /**
   * Requests answered 429 (THROTTLED or QUOTA_EXCEEDED: a key over its tier's usage plan, or the
   * stage throttle), counted from the access log per route: method and resource path, the
   * dimensions the dashboard reads. Who is limited is the `limited-keys` query's answer.
   */
  private addLimitedRequestsFilter() {
    new logs.MetricFilter(this, 'TooManyRequestsFilter', {
      logGroup: this.props.accessLogs,
      filterPattern: logs.FilterPattern.numberValue('$.status', '=', 429),
      metricNamespace: metricsNamespace,
      metricName: metricNames.tooManyRequests,
      metricValue: '1',
      // In the order CloudWatch lists them (by name), as the dashboard's metrics do.
      dimensions: { method: '$.httpMethod', resource: '$.resourcePath', service: '$.service' },
    });
  }

  /** 429s of one route, as the access-log metric filter counts them. */
  private tooManyRequestsOf(route: Route): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: metricsNamespace,
      metricName: metricNames.tooManyRequests,
      dimensionsMap: { method: route.method, resource: `${basePath}${route.path}`, service: serviceName(this.props.config) },
      statistic: 'Sum',
      period,
    });
  }

  /** On-demand tables rarely throttle: any throttle or DynamoDB-side error of this service's operations is news. */
  private addTableAlarms() {
    for (const { id: tableId, table, operations } of this.props.tables) {
      const perOperation = (metricName: string) =>
        Object.fromEntries(
          operations.map((operation) => [
            operation.toLowerCase(),
            table.metric(metricName, { dimensionsMap: { TableName: table.tableName, Operation: operation }, statistic: 'Sum', period }),
          ]),
        );
      this.alarm(`${tableId}Throttles`, `DynamoDB throttled requests of this service to ${tableId}.`, {
        metric: filledSum('throttled requests', perOperation('ThrottledRequests')),
        threshold: 1,
        evaluationPeriods: 1,
      });
      this.alarm(`${tableId}SystemErrors`, `DynamoDB answered requests of this service to ${tableId} with a server error.`, {
        metric: filledSum('system errors', perOperation('SystemErrors')),
        threshold: 1,
        evaluationPeriods: 1,
      });
    }
  }

  private functionLogGroups() {
    return [...this.props.routeFunctions.map(({ fn }) => fn.logGroup), this.props.authorizer.logGroup];
  }

  private addDashboard() {
    const { config, routeFunctions, authorizer, tables } = this.props;
    const functions = [...routeFunctions, { name: 'Authorizer', fn: authorizer }];
    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: this.prefix, defaultInterval: Duration.hours(3) });
    const graph = (title: string, left: cloudwatch.IMetric[], right: cloudwatch.IMetric[] = []) =>
      new cloudwatch.GraphWidget({ title, width: 8, left, right });
    const perFunction = (title: string, metric: (fn: StoreFunction) => cloudwatch.Metric) =>
      graph(
        title,
        functions.map(({ name, fn }) => metric(fn).with({ label: name })),
      );

    dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `# Store Orders — ${config.stage}\nAlarms are explained in docs/runbook.md. Logs: saved queries under "${this.prefix}/" in Logs Insights.`,
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 4 }));
    dashboard.addWidgets(
      graph('Requests and errors', [
        this.apiMetric('Count', 'Sum').with({ label: 'requests' }),
        this.apiMetric('4XXError', 'Sum').with({ label: '4xx' }),
        this.apiMetric('5XXError', 'Sum').with({ label: '5xx' }),
      ]),
      ...this.latencyWatched().map(({ route, latency }) =>
        graph(`${latency.name} latency (ms)`, [
          this.apiMetric('Latency', 'p50', route).with({ label: 'p50' }),
          this.apiMetric('Latency', 'p99', route).with({ label: 'p99' }),
        ]),
      ),
      graph(
        'Orders',
        [
          this.serviceMetric(metricNames.ordersCancelled, 'Sum').with({ label: 'cancelled' }),
          this.serviceMetric(metricNames.cancelConflicts, 'Sum').with({ label: 'cancel conflicts (409)' }),
          this.serviceMetric(metricNames.ordersNotFound, 'Sum').with({ label: 'not found (404)' }),
          this.serviceMetric(metricNames.invalidStoredOrders, 'Sum').with({ label: 'invalid stored orders' }),
        ],
        [this.serviceMetric(metricNames.ordersListed, 'Sum').with({ label: 'orders listed' })],
      ),
    );
    dashboard.addWidgets(
      graph('List: first byte and whole stream (ms)', [
        this.serviceMetric(metricNames.listFirstByte, 'p50').with({ label: 'first byte p50' }),
        this.serviceMetric(metricNames.listFirstByte, 'p99').with({ label: 'first byte p99' }),
        this.serviceMetric(metricNames.listDuration, 'p99').with({ label: 'whole list p99' }),
        ...this.longRunning().map(({ fn }) => fn.function.metricDuration({ statistic: 'Maximum', period, label: 'function duration max' })),
      ]),
      graph('Keys', [
        this.serviceMetric(metricNames.authFailures, 'Sum').with({ label: 'refused keys' }),
        this.serviceMetric(metricNames.authorizerFailures, 'Sum').with({ label: 'authorizer failures' }),
      ]),
      perFunction('Invocations', (fn) => fn.function.metricInvocations({ statistic: 'Sum', period })),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Limited requests (429) per route; who: saved query limited-keys',
        width: 24,
        left: routeFunctions.map(({ route }) => this.tooManyRequestsOf(route).with({ label: `${route.method} ${basePath}${route.path}` })),
      }),
    );
    dashboard.addWidgets(
      perFunction('Errors', (fn) => fn.function.metricErrors({ statistic: 'Sum', period })),
      perFunction('Throttles', (fn) => fn.function.metricThrottles({ statistic: 'Sum', period })),
      perFunction('Duration p99 (ms)', (fn) => fn.function.metricDuration({ statistic: 'p99', period })),
    );
    dashboard.addWidgets(
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
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.LogQueryWidget({
        title: 'Recent errors and warnings',
        width: 24,
        height: 6,
        logGroupNames: this.functionLogGroups().map((group) => group.logGroupName),
        queryLines: [
          'fields @timestamp, level, operation, request_id, outcome, message',
          "filter level in ['ERROR', 'WARN']",
          'sort @timestamp desc',
          'limit 50',
        ],
      }),
    );
    return dashboard;
  }

  /** Saved Logs Insights queries (CloudWatch → Logs Insights → Saved queries → "<prefix>/…"). */
  private addQueries() {
    const { accessLogs, authorizer } = this.props;
    const functionLogGroups = this.functionLogGroups();
    const query = (queryId: string, logGroups: logs.ILogGroup[], queryString: logs.QueryString) =>
      new logs.QueryDefinition(this, `Query-${queryId}`, { queryDefinitionName: `${this.prefix}/${queryId}`, logGroups, queryString });
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
      [...functionLogGroups, accessLogs],
      new logs.QueryString({
        fields: [
          '@timestamp',
          '@log',
          'level',
          'message',
          'outcome',
          'status',
          'statusCode',
          'latencyMs',
          'responseLatency',
          'authorizerRequestId',
          'integrationRequestId',
        ],
        // Paste the X-Request-Id a client quotes. The authorizer's lines have no API request id:
        // search its log for `function_request_id` = the access log's authorizerRequestId.
        filterStatements: ["request_id = 'PASTE-X-REQUEST-ID' or requestId = 'PASTE-X-REQUEST-ID'"],
        sort: '@timestamp asc',
      }),
    );
    query(
      'gateway-errors',
      [accessLogs],
      new logs.QueryString({
        filterStatements: ['status >= 400'],
        statsStatements: ['count(*) as requests by status, errorResponseType, authorizerError, integrationError'],
        sort: 'requests desc',
      }),
    );
    // Who is being limited: throttled and quota-refused requests by key id (principalId, never the key).
    query(
      'limited-keys',
      [accessLogs],
      new logs.QueryString({
        filterStatements: ["errorResponseType in ['THROTTLED', 'QUOTA_EXCEEDED']"],
        statsStatements: ['count(*) as refused by principalId, errorResponseType, httpMethod, resourcePath'],
        sort: 'refused desc',
      }),
    );
    query(
      'slowest-requests',
      [accessLogs],
      new logs.QueryString({
        fields: [
          '@timestamp',
          'requestId',
          'httpMethod',
          'path',
          'status',
          'responseLatency',
          'responseTransferMode',
          'timeToFirstContent',
          'integrationLatency',
          'authorizerLatency',
        ],
        // A streamed list lasts as long as its transfer: compare its time to first content instead.
        sort: 'responseLatency desc',
        limit: 50,
      }),
    );
    query(
      'auth-refusals',
      [authorizer.logGroup],
      new logs.QueryString({
        filterStatements: ["message = 'authorization refused'"],
        statsStatements: ['count(*) as refusals by reason, operation, bin(5m)'],
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
