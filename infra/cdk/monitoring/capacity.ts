import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { type AlarmTarget, alarm } from './stage-alarm.ts';
import {
  aliasMetric,
  apiMetric,
  failingMinutes,
  failingMinutesRule,
  longRunning,
  minute,
  period,
  reservingFunctions,
  stageFunctions,
} from './metrics.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';

/** A long-running function (the list) may run this close to its timeout before the team hears of it. */
const nearTimeoutShare = 0.8;

/**
 * Throttles in at least this many of the last `periods` 5-minute periods make a function at its
 * reserved concurrency a ticket: shedding load for half an hour says the stage wants more slots.
 */
export const sheddingRule = { throttledPeriods: 3, periods: 6 } as const;

/**
 * `<Name>ShedShare`'s rule: the share of a route's requests its function sheds (throttles of its
 * live alias) at or above `percent` in `shedPeriods` of the last `periods` 5-minute periods, each
 * with `minRequests` requests or more: most of the route's clients refused for a quarter of an hour
 * is an outage, documented refusals or not. One period to spare: the newest is partly arrived, its
 * requests maybe fewer than the minimum (then 0), and must not keep the page quiet.
 */
export const shedShareRule = { percent: 50, shedPeriods: 3, periods: 4, minRequests: 10 } as const;

/** ShedShare's expression: `shed` (a sum of metric ids) as a share (%) of `requests`, 0 under the minimum. */
export const shedShareExpression = (shed: string) => `IF(FILL(requests, 0) >= ${shedShareRule.minRequests}, 100 * (${shed}) / requests, 0)`;

/**
 * Capacity: what the stage refuses because it is full, judged apart from failures.
 *
 * - `<Name>Throttles` of a function with reserved concurrency (the list, the v2 page): a ticket once
 *   it has shed load in three of the last six 5-minute periods. Each refusal is documented (a 5xx
 *   with Retry-After the client waits out) and moves no page or guard; that the stage wants more
 *   slots is a decision for the next working day (`listReservedConcurrency`, `pagedListReservedConcurrency`).
 * - `<Name>Throttles` of the others (cancel, the authorizer: no reservation): pages, in 2 of the
 *   last 10 minutes. They are throttled only when the account's whole concurrency is taken, which
 *   fails clients for real; one throttle in a moment's spike pages nobody.
 * - `<Name>ShedShare` of a function with reserved concurrency: pages. The refusals Api5xxRate and
 *   the SLO leave out are bounded here: a release (or a setting) that sheds most lists is down.
 * - `<Name>NearTimeout` of a long-running function: a ticket. A list that long is read slowly by
 *   its client or is near the size one answer can carry; it is cut before the timeout either way.
 */
export function addCapacityAlarms(target: AlarmTarget, props: StoreOrdersMonitoringProps) {
  const reserving = new Set(reservingFunctions(props).map(({ fn }) => fn));
  for (const { name, fn, contract } of stageFunctions(props)) {
    const throttles = (over: typeof period) => fn.function.metricThrottles({ statistic: 'Sum', period: over });
    const { runbook } = contract;
    if (reserving.has(fn))
      alarm(
        target,
        `${name}Throttles`,
        `The ${name} function ran all it reserves and shed load in ${sheddingRule.throttledPeriods} of the last ${sheddingRule.periods} 5-minute periods.`,
        {
          metric: throttles(period),
          threshold: 1,
          evaluationPeriods: sheddingRule.periods,
          datapointsToAlarm: sheddingRule.throttledPeriods,
        },
        { kind: 'ticket', runbook },
      );
    else
      alarm(
        target,
        `${name}Throttles`,
        `Lambda throttled the ${name} function in ${failingMinutesRule.failing} of the last ${failingMinutesRule.of} minutes: the account's concurrency is used up.`,
        { metric: throttles(minute), ...failingMinutes },
        { runbook },
      );
  }
  addShedShareAlarms(target, props);
  for (const { name, contract, fn } of longRunning(props)) {
    const { function: settings, alarms, runbook } = contract;
    const timeoutMs = settings.timeoutSeconds * 1000;
    alarm(
      target,
      `${name}NearTimeout`,
      `${alarms.nearTimeout!.invocation} ran for ${nearTimeoutShare * 100}% or more of its ${timeoutMs / 60_000}-minute timeout.`,
      {
        metric: fn.function.metricDuration({ statistic: 'Maximum', period }),
        threshold: timeoutMs * nearTimeoutShare,
        evaluationPeriods: 1,
      },
      { kind: 'ticket', runbook },
    );
  }
}

/**
 * `<Name>ShedShare` of each function with reserved concurrency (./server-errors.ts leaves their
 * throttles out). It counts the throttles of the function's `live` alias only, never a key's own
 * refusals (a list refused because its key runs its tier's lists already): a client that keeps
 * asking into its own full slots moves no page.
 */
function addShedShareAlarms(target: AlarmTarget, props: StoreOrdersMonitoringProps) {
  const { percent, shedPeriods, periods } = shedShareRule;
  for (const { name, fn, route, contract } of reservingFunctions(props)) {
    alarm(
      target,
      `${name}ShedShare`,
      `The ${name} function shed ${percent}% or more of its route's requests (throttled at its reserved concurrency) in ${shedPeriods} of the last ${periods} 5-minute periods: most clients are refused.`,
      {
        metric: new cloudwatch.MathExpression({
          label: `${name}: requests shed (%)`,
          expression: shedShareExpression('FILL(throttles, 0)'),
          usingMetrics: { throttles: aliasMetric(fn, 'Throttles', 'Sum'), requests: apiMetric(props, 'Count', 'Sum', route) },
          period,
        }),
        threshold: percent,
        evaluationPeriods: periods,
        datapointsToAlarm: shedPeriods,
      },
      { runbook: contract.runbook },
    );
  }
}
