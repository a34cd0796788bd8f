import { Duration, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Construct } from 'constructs';
import type { OperationContract, OperationSlo } from '../../function-contract.ts';
import { ofStage } from '../contract-checks.ts';
import { apiMetric, serviceMetric } from './metrics.ts';
import { runbookPointer, serviceRunbook } from './runbook.ts';
import { serverFailures } from './server-errors.ts';
import type { StageTopics } from './topics.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';

/**
 * Service level objectives and burn-rate alerts, as the Site Reliability Workbook's chapter 5
 * ("Alerting on SLOs", its multiwindow, multi-burn-rate table) sets them for a 30-day window:
 * each tier alarms when the error budget burns at least `burnRate` times as fast as the window
 * allows, over a long window and a short one at once (the short one makes it reset soon after
 * the burn stops). Built from metrics the stage already has, with CloudWatch metric math; a
 * window is one metric alarm (its period is the window), a tier is a composite alarm of the two.
 * docs/operating.md#service-level-objectives states them; docs/decisions.md says why not Application Signals.
 */
export const sloWindow = Duration.days(30);

export const burnTiers = [
  // 2 % of a 30-day budget in an hour: pages.
  { id: 'FastBurn', long: Duration.hours(1), short: Duration.minutes(5), burnRate: 14.4, pages: true },
  // 5 % in six hours: pages.
  { id: 'MediumBurn', long: Duration.hours(6), short: Duration.minutes(30), burnRate: 6, pages: true },
  // 10 % in three days: a ticket, for the next working day (the ticket topic).
  { id: 'SlowBurn', long: Duration.days(3), short: Duration.hours(6), burnRate: 1, pages: false },
] as const;

type Props = StoreOrdersMonitoringProps;

/** One SLO: what its bad fraction is, over any window, as a metric math expression. */
interface Slo {
  readonly id: string;
  readonly what: string;
  /** The target, in percent of good events over the 30-day window. */
  readonly targetPercent: number;
  /** The page whose sections its burn-rate alarms point to. */
  readonly runbook: string;
  /** The fraction (0..1) of bad events over `window`. */
  readonly badFraction: (window: Duration) => { expression: string; usingMetrics: Record<string, cloudwatch.IMetric> };
}

/**
 * Of the latency SLOs, the good events are those at or under the threshold: CloudWatch's
 * percentile rank `PR(:t)`, the percentage of datapoints (requests) at or below t.
 */
const latencySlo = (props: Props, { name, route, runbook }: OperationContract, { id, what, measure, ...slo }: OperationSlo): Slo => {
  const objective = ofStage(slo.objective, props.config.stage, `${name}'s SLO ${id} (alarms.slo.objective)`);
  const metric = measure === 'gatewayLatency' ? apiMetric(props, 'Latency', 'p99', route) : serviceMetric(props, measure.metricName, 'p99');
  return {
    id,
    what: `${objective.percent}% of ${what} within ${objective.thresholdMs} ms`,
    targetPercent: objective.percent,
    runbook,
    badFraction: (window) => ({
      expression: `(100 - FILL(good, 100)) / 100`,
      usingMetrics: { good: metric.with({ statistic: `PR(:${objective.thresholdMs})`, period: window }) },
    }),
  };
};

/**
 * The stage's SLOs: availability (infra/stage-config.ts, `alarms.slo`), then each operation's own
 * (its contract's `alarms.slo`), by id.
 */
export function stageSlos(props: Props): Slo[] {
  const { slo } = props.config.alarms;
  const operations = props.routeFunctions
    .flatMap(({ contract }) => (contract.alarms.slo === undefined ? [] : [{ contract, slo: contract.alarms.slo }]))
    .sort((a, b) => a.slo.id.localeCompare(b.slo.id));
  return [
    {
      id: 'Availability',
      what: `${slo.availabilityPercent}% of requests answered without a 5xx (documented refusals not counted)`,
      targetPercent: slo.availabilityPercent,
      runbook: serviceRunbook,
      // Failures as Api5xxRate counts them: a list shed at its concurrency or a page refused while the status index backfills is no failure.
      badFraction: (window) => {
        const failures = serverFailures(props, window);
        return {
          expression: `(${failures.expression}) / requests`,
          usingMetrics: { ...failures.usingMetrics, requests: apiMetric(props, 'Count', 'Sum').with({ period: window }) },
        };
      },
    },
    ...operations.map(({ contract, slo }) => latencySlo(props, contract, slo)),
  ];
}

const label = (duration: Duration) =>
  duration.toDays({ integral: false }) >= 1
    ? `${duration.toDays()}d`
    : duration.toHours({ integral: false }) >= 1
      ? `${duration.toHours()}h`
      : `${duration.toMinutes()}m`;

/** The burn rate of `slo` over `window`: its bad fraction divided by the budget's (1 − target). */
function burnRate(slo: Slo, window: Duration) {
  const { expression, usingMetrics } = slo.badFraction(window);
  const budget = (100 - slo.targetPercent) / 100;
  return new cloudwatch.MathExpression({
    label: `${slo.id} burn rate over ${label(window)}`,
    expression: `(${expression}) / ${Number(budget.toFixed(6))}`,
    usingMetrics,
    period: window,
  });
}

/**
 * The burn-rate alarms: for each SLO and tier, two window alarms without actions and the
 * composite alarm of both, which notifies the paging topic (a page) or the ticket topic (a
 * ticket). Returns the composite alarms (the runbook's sections).
 */
export function addSloAlarms(scope: Construct, props: Props, prefix: string, topics: StageTopics): cloudwatch.CompositeAlarm[] {
  return stageSlos(props).flatMap((slo) =>
    burnTiers.map((tier) => {
      const id = `${slo.id}${tier.id}`;
      const window = (which: 'Long' | 'Short', duration: Duration) => {
        const created = new cloudwatch.Alarm(scope, `${id}${which}`, {
          alarmName: `${prefix}-${id}${which}`,
          alarmDescription: `Burn rate of "${slo.what}" over ${label(duration)} at or above ${tier.burnRate}; one window of ${id} (no action of its own).`,
          metric: burnRate(slo, duration),
          threshold: tier.burnRate,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          // No requests burn no budget.
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        });
        Validations.of(created).acknowledge({
          id: 'cdk-validator-cfnguard::cloudwatch_alarm_action_check',
          reason:
            'One window of a multiwindow burn-rate alert (CT.CLOUDWATCH.PR.1): its composite alarm, which fires only when both windows burn, notifies the alarm topic; an action here would page on one window alone.',
        });
        return created;
      };
      const composite = new cloudwatch.CompositeAlarm(scope, id, {
        compositeAlarmName: `${prefix}-${id}`,
        alarmDescription:
          `${tier.pages ? 'Page' : 'Ticket'}: the error budget of "${slo.what}" over ${sloWindow.toDays()} days burns ${tier.burnRate}× as fast as it may, ` +
          `over ${label(tier.long)} and the last ${label(tier.short)}. ${runbookPointer(id, slo.runbook)}`,
        alarmRule: cloudwatch.AlarmRule.allOf(
          cloudwatch.AlarmRule.fromAlarm(window('Long', tier.long), cloudwatch.AlarmState.ALARM),
          cloudwatch.AlarmRule.fromAlarm(window('Short', tier.short), cloudwatch.AlarmState.ALARM),
        ),
      });
      const topic = tier.pages ? topics.page : topics.ticket;
      composite.addAlarmAction(new SnsAction(topic));
      composite.addOkAction(new SnsAction(topic));
      return composite;
    }),
  );
}

/**
 * The dashboard's error-budget row: for each SLO, the share of its 30-day error budget left
 * (100 % less what the last 30 days' bad events spent; below 0 when overspent).
 */
export function errorBudgetWidgets(props: Props): cloudwatch.IWidget[] {
  return stageSlos(props).map((slo) => {
    const { expression, usingMetrics } = slo.badFraction(sloWindow);
    const budget = (100 - slo.targetPercent) / 100;
    return new cloudwatch.SingleValueWidget({
      title: `${slo.id}: error budget left (30 days)`,
      width: 8,
      height: 4,
      start: '-P30D',
      setPeriodToTimeRange: true,
      metrics: [
        new cloudwatch.MathExpression({
          label: `${slo.what}: budget left (%)`,
          expression: `100 * (1 - (${expression}) / ${Number(budget.toFixed(6))})`,
          usingMetrics,
          period: sloWindow,
        }),
      ],
    });
  });
}
