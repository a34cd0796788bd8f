import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Construct } from 'constructs';
import { type FunctionName, functionSettings } from '../../function-settings.ts';
import type { StageTopics } from './topics.ts';

// One alarm of the stage: whom it tells, and which deployments it guards. Each family of alarms
// (./alarms.ts lists them) adds its own through `alarm`.

/**
 * Whom an alarm tells (docs/operating.md#logs-metrics-alarms-dashboard-and-queries): `page`, on-call at once, through the paging
 * topic; `ticket`, the team on its next working day, through the ticket topic. A guard (an alarm a
 * deployment group watches) pages too: it judges the version a deploy moves to, which between
 * deploys is the one serving.
 */
export type AlarmKind = 'page' | 'ticket';

/** Every function has a deployment group of its own: these are its names. */
export const deployedFunctions = Object.keys(functionSettings) as FunctionName[];

/** The stage's alarms, in the order they were added (the dashboard's status widget lists them so). */
export interface StageAlarms {
  readonly all: cloudwatch.Alarm[];
  /**
   * Per function, the alarms its deployment group watches while CodeDeploy shifts its traffic, and
   * rolls back on (at most 10 per group): its new version's own signals, and the service's probes.
   */
  readonly guardsOf: Readonly<Record<FunctionName, cloudwatch.Alarm[]>>;
}

export interface AlarmTarget extends StageAlarms {
  readonly scope: Construct;
  readonly prefix: string;
  readonly topics: StageTopics;
}

const roleText = (kind: AlarmKind, guards: readonly FunctionName[]) => {
  if (guards.length === deployedFunctions.length) return 'Guards every deployment; pages.';
  if (guards.length > 0) return `Guards the deployments of ${guards.join(', ')}; pages.`;
  return kind === 'page' ? 'Pages.' : 'Ticket (next working day).';
};

/**
 * One alarm of the stage: `StoreOrders-<stage>-<alarmId>`, notifying its kind's topic on ALARM and
 * on OK, and watched by the deployment groups of `guards` (a guard always pages).
 */
export function alarm(
  target: AlarmTarget,
  alarmId: string,
  what: string,
  options: Omit<cloudwatch.AlarmProps, 'alarmName' | 'alarmDescription'>,
  { kind = 'page', guards = [] }: { kind?: AlarmKind; guards?: readonly FunctionName[] } = {},
) {
  if (guards.length > 0 && kind !== 'page') throw new Error(`${alarmId}: a guard pages`);
  const created = new cloudwatch.Alarm(target.scope, alarmId, {
    alarmName: `${target.prefix}-${alarmId}`,
    alarmDescription: `${what} ${roleText(kind, guards)} Runbook: docs/runbook.md, section "${alarmId}".`,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    // No traffic is not a problem.
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    ...options,
  });
  const topic = kind === 'page' ? target.topics.page : target.topics.ticket;
  created.addAlarmAction(new SnsAction(topic));
  created.addOkAction(new SnsAction(topic));
  target.all.push(created);
  for (const fn of guards) target.guardsOf[fn].push(created);
  return created;
}
