import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { addCapacityAlarms } from './capacity.ts';
import { addGuardAlarms } from './guards.ts';
import { addKeyAlarms } from './key-alarms.ts';
import { countLimitedRequests } from './metrics.ts';
import { addProbeAlarms } from './probe-alarms.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';
import { addServerErrorAlarm } from './server-errors.ts';
import type { AlarmTarget, StageAlarms } from './stage-alarm.ts';
import { addTableAlarms } from './table-alarms.ts';
import type { StageTopics } from './topics.ts';

/**
 * The alarms that docs/runbook.md explains (one section per alarm id), by family. Each fires on
 * the fault its name says and only then; nothing a client may do moves a page or a guard (a
 * refused key, a list left early, a documented refusal), docs/reference/alarms.md#what-the-guards-see.
 */
export function addAlarms(scope: Construct, props: StoreOrdersMonitoringProps, prefix: string, topics: StageTopics): StageAlarms {
  // In the registry's order, the authorizer first: each function has a deployment group of its own.
  const functions = [props.authorizerContract.name, ...props.routeFunctions.map(({ contract }) => contract.name)];
  const target: AlarmTarget = {
    scope,
    prefix,
    topics,
    functions,
    all: [],
    guardsOf: Object.fromEntries(functions.map((fn) => [fn, [] as cloudwatch.Alarm[]])),
  };
  addServerErrorAlarm(target, props);
  addGuardAlarms(target, props);
  addCapacityAlarms(target, props);
  addKeyAlarms(target, props);
  // Not an alarm: the 429 count the dashboard graphs, kept in its place among the metric filters.
  countLimitedRequests(scope, props);
  addProbeAlarms(target, props);
  addTableAlarms(target, props);
  return { all: target.all, guardsOf: target.guardsOf };
}
