import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { routes } from '../../shared/routes.ts';
import { addAlarms, addAlarmTopic } from './monitoring/alarms.ts';
import { addDashboard, dashboardUrl } from './monitoring/dashboard.ts';
import { addSavedQueries } from './monitoring/queries.ts';
import { addSloAlarms } from './monitoring/slo.ts';
import type { StageConfig } from '../stage-config.ts';
import type { StoreFunction } from './store-function.ts';

export interface StoreOrdersMonitoringProps {
  readonly config: StageConfig;
  readonly api: apigw.RestApi;
  readonly accessLogs: logs.ILogGroup;
  /** The route functions, each under the name its alarms and graphs use (e.g. ListOrders). */
  readonly routeFunctions: readonly { readonly name: string; readonly route: (typeof routes)[number]; readonly fn: StoreFunction }[];
  readonly authorizer: StoreFunction;
  /** The stage's Synthetics canary (infra/cdk/release-checks.ts), by name. */
  readonly canaryName: string;
  /** Each table with the operations this service performs on it (DynamoDB reports throttles per operation). */
  readonly tables: readonly { readonly id: string; readonly table: dynamodb.Table; readonly operations: dynamodb.Operation[] }[];
}

/**
 * What on-call sees of one stage: an SNS topic that every alarm notifies, the alarms that
 * docs/runbook.md explains (monitoring/alarms.ts), a dashboard (monitoring/dashboard.ts)
 * and saved Logs Insights queries (monitoring/queries.ts), all named after the stage.
 * Every part is created in this construct's scope: their logical ids are part of the deployed contract.
 */
export class StoreOrdersMonitoring extends Construct {
  readonly alarmTopic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[];
  /**
   * The alarms a bad release would set off: CodeDeploy watches them while it shifts traffic to
   * a new version and rolls back when one goes off (at most 10 per deployment group).
   */
  readonly guardAlarms: cloudwatch.Alarm[];
  /** The SLOs' burn-rate alarms (monitoring/slo.ts): composite alarms, each of a long and a short window. */
  readonly sloAlarms: cloudwatch.CompositeAlarm[];
  readonly dashboard: cloudwatch.Dashboard;
  readonly dashboardUrl: string;

  constructor(scope: Construct, id: string, props: StoreOrdersMonitoringProps) {
    super(scope, id);
    const prefix = `StoreOrders-${props.config.stage}`;
    this.alarmTopic = addAlarmTopic(this, props.config, prefix);
    ({ all: this.alarms, guards: this.guardAlarms } = addAlarms(this, props, prefix, this.alarmTopic));
    this.sloAlarms = addSloAlarms(this, props, prefix, this.alarmTopic);
    this.dashboard = addDashboard(this, props, prefix, [...this.sloAlarms, ...this.alarms]);
    this.dashboardUrl = dashboardUrl(prefix);
    addSavedQueries(this, props, prefix);
  }
}
