import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { stackName } from '../names.ts';
import { addAlarms, addAlarmTopic } from './monitoring/alarms.ts';
import { addDashboard, dashboardUrl } from './monitoring/dashboard.ts';
import { addOrdersWriteThrottlesAlarm, ordersWritesWidget } from './monitoring/orders-writes.ts';
import { addSavedQueries } from './monitoring/queries.ts';
import type { StoreOrdersMonitoringProps } from './monitoring/props.ts';
import { addSloAlarms } from './monitoring/slo.ts';

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
    const prefix = stackName(props.config.stage);
    this.alarmTopic = addAlarmTopic(this, props.config, prefix);
    ({ all: this.alarms, guards: this.guardAlarms } = addAlarms(this, props, prefix, this.alarmTopic));
    // The orders table's writes from every writer, the store's other systems too: pages, guards no deploy.
    this.alarms.push(addOrdersWriteThrottlesAlarm(this, { table: props.ordersTable, prefix, topic: this.alarmTopic }));
    this.sloAlarms = addSloAlarms(this, props, prefix, this.alarmTopic);
    this.dashboard = addDashboard(this, props, prefix, [...this.sloAlarms, ...this.alarms]);
    this.dashboard.addWidgets(ordersWritesWidget(props.ordersTable));
    this.dashboardUrl = dashboardUrl(prefix);
    addSavedQueries(this, props, prefix);
  }
}
