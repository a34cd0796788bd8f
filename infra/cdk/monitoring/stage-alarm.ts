import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Construct } from 'constructs';
import { runbookPointer } from './runbook.ts';
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

/** The stage's alarms, in the order they were added (the dashboard's status widget lists them so). */
export interface StageAlarms {
  readonly all: cloudwatch.Alarm[];
  /**
   * Per function, the alarms its deployment group watches while CodeDeploy shifts its traffic, and
   * rolls back on (at most 10 per group): its new version's own signals, and the service's probes.
   */
  readonly guardsOf: Readonly<Record<string, cloudwatch.Alarm[]>>;
}

export interface AlarmTarget extends StageAlarms {
  readonly scope: Construct;
  /** Every function of the stage: each has a deployment group of its own. */
  readonly functions: readonly string[];
  readonly prefix: string;
  readonly topics: StageTopics;
}

const roleText = (target: AlarmTarget, kind: AlarmKind, guards: readonly string[]) => {
  if (guards.length === target.functions.length) return 'Guards every deployment; pages.';
  if (guards.length > 0) return `Guards the deployments of ${guards.join(', ')}; pages.`;
  return kind === 'page' ? 'Pages.' : 'Ticket (next working day).';
};

/**
 * One alarm of the stage: `StoreOrders-<stage>-<alarmId>`, notifying its kind's topic on ALARM and
 * on OK, and watched by the deployment groups of `guards` (`all`: every function's; a guard always
 * pages). Its description points to its section of `runbook` (a function's contract names its own),
 * which must be there (./runbook.ts).
 */
export function alarm(
  target: AlarmTarget,
  alarmId: string,
  what: string,
  options: Omit<cloudwatch.AlarmProps, 'alarmName' | 'alarmDescription'>,
  { kind = 'page', guards: guarded = [], runbook }: { kind?: AlarmKind; guards?: readonly string[] | 'all'; runbook?: string } = {},
) {
  const guards = guarded === 'all' ? target.functions : guarded;
  if (guards.length > 0 && kind !== 'page') throw new Error(`${alarmId}: a guard pages`);
  const created = new cloudwatch.Alarm(target.scope, alarmId, {
    alarmName: `${target.prefix}-${alarmId}`,
    alarmDescription: `${what} ${roleText(target, kind, guards)} ${runbookPointer(alarmId, runbook)}`,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    // No traffic is not a problem.
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    ...options,
  });
  const topic = kind === 'page' ? target.topics.page : target.topics.ticket;
  created.addAlarmAction(new SnsAction(topic));
  created.addOkAction(new SnsAction(topic));
  target.all.push(created);
  for (const fn of guards) target.guardsOf[fn]!.push(created);
  return created;
}
