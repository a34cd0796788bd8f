import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { stackName } from '../names.ts';
import { addAlarms } from './monitoring/alarms.ts';
import { addDashboard, dashboardUrl } from './monitoring/dashboard.ts';
import { addOrdersWriteThrottlesAlarm, ordersWritesWidget } from './monitoring/orders-writes.ts';
import { addSavedQueries } from './monitoring/queries.ts';
import type { StoreOrdersMonitoringProps } from './monitoring/props.ts';
import { addSloAlarms } from './monitoring/slo.ts';
import { addStageTopics } from './monitoring/topics.ts';

/**
 * What on-call sees of one stage: a paging topic and a ticket topic (monitoring/topics.ts), the
 * alarms that docs/runbook.md explains (monitoring/alarms.ts lists their families), a dashboard
 * (monitoring/dashboard.ts) and saved Logs Insights queries (monitoring/queries.ts), all named
 * after the stage. Every part is created in this construct's scope: their logical ids are part of
 * the deployed contract.
 */
export class StoreOrdersMonitoring extends Construct {
  /** Pages: on-call hears them at once (the `AlarmTopicArn` output). */
  readonly alarmTopic: sns.Topic;
  /** Tickets: the team reads them the next working day (the `TicketTopicArn` output). */
  readonly ticketTopic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[];
  /**
   * Per function, the alarms its deployment group watches while CodeDeploy shifts traffic to a new
   * version, rolling back when one goes off (at most 10 per group).
   */
  readonly guardsOf: Readonly<Record<string, cloudwatch.Alarm[]>>;
  /** Every guard of any deployment group, once (the preflight reads their states). */
  readonly guardAlarms: cloudwatch.Alarm[];
  /** The SLOs' burn-rate alarms (monitoring/slo.ts): composite alarms, each of a long and a short window. */
  readonly sloAlarms: cloudwatch.CompositeAlarm[];
  readonly dashboard: cloudwatch.Dashboard;
  readonly dashboardUrl: string;

  constructor(scope: Construct, id: string, props: StoreOrdersMonitoringProps) {
    super(scope, id);
    const prefix = stackName(props.config.stage);
    const topics = addStageTopics(this, props.config, prefix);
    this.alarmTopic = topics.page;
    this.ticketTopic = topics.ticket;
    ({ all: this.alarms, guardsOf: this.guardsOf } = addAlarms(this, props, prefix, topics));
    // The orders table's writes from every writer, the store's other systems too: pages, guards no deploy.
    this.alarms.push(addOrdersWriteThrottlesAlarm(this, { table: props.ordersTable, prefix, topic: topics.page }));
    this.guardAlarms = [...new Set(Object.values(this.guardsOf).flat())];
    this.sloAlarms = addSloAlarms(this, props, prefix, topics);
    this.dashboard = addDashboard(this, props, prefix, [...this.sloAlarms, ...this.alarms]);
    this.dashboard.addWidgets(ordersWritesWidget(props.ordersTable));
    this.dashboardUrl = dashboardUrl(prefix);
    addSavedQueries(this, props, prefix);
  }
}
