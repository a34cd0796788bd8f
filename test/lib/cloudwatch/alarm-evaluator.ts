/**
 * An offline CloudWatch alarm evaluator, as the IAM simulator is for policies: the metric and
 * composite alarms of a synthesized template, evaluated once a minute against a MetricStore
 * (./metric-store.ts), following the User Guide's "Using Amazon CloudWatch alarms" (period,
 * evaluation periods, datapoints to alarm, M out of N) and "Configuring how CloudWatch alarms treat
 * missing data" (the evaluation range, filling only as few missing datapoints as needed; the
 * AWS/DynamoDB namespace ignoring missing data whatever the setting: PutMetricAlarm's reference).
 *
 * What the documentation leaves open is a choice of the caller (EvaluationModel), never a guess:
 * how an arithmetic operation treats a missing value (./metric-math.ts), where the periods fall and
 * whether the newest, partly arrived one counts, and how long datapoints take to arrive.
 */
import { resolve } from '../template.ts';
import { evaluateExpression, type MissingReading, type Series } from './metric-math.ts';
import type { MetricId, MetricStore } from './metric-store.ts';

export type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

export type EvaluationModel = {
  readonly reading: MissingReading;
  /**
   * Where the evaluation range's periods fall at minute `t`:
   * - `complete`: on multiples of their length since the epoch, the newest one that has ended and
   *   whose data arrived (the latest an alarm can see a period);
   * - `partial`: on multiples of their length, the newest one holding minute `t − delay`, with what
   *   arrived of it so far (the earliest);
   * - `clock`: ending at `t` itself, as CloudWatch's default sliding window evaluates once a minute
   *   (the User Guide's "Alarm evaluation window"): the newest period is partly arrived, its
   *   last `delayMinutes` minutes not there yet, so a single-period alarm judges a part of one.
   */
  readonly periods: 'complete' | 'partial' | 'clock';
  /** Minutes from a minute's end to its datapoints being seen by an alarm. */
  readonly delayMinutes: number;
};

type Query =
  | { readonly id: string; readonly metric: MetricId; readonly stat: string; readonly periodMinutes: number }
  | { readonly id: string; readonly expression: string };

export type MetricAlarmModel = {
  readonly logicalId: string;
  readonly name: string;
  readonly queries: readonly Query[];
  /** The query whose series is compared with the threshold. */
  readonly returned: string;
  readonly periodMinutes: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  readonly threshold: number;
  readonly comparison: string;
  readonly treatMissingData: 'missing' | 'ignore' | 'breaching' | 'notBreaching';
};

type Props = Record<string, unknown>;
const dims = (list: unknown): Record<string, string> =>
  Object.fromEntries(((list ?? []) as { Name: string; Value: unknown }[]).map(({ Name, Value }) => [Name, String(resolve(Value))]));
const minutes = (seconds: unknown) => {
  if (typeof seconds !== 'number' || seconds % 60 !== 0) throw new Error(`a period of ${String(seconds)} s is not modelled`);
  return seconds / 60;
};

/** The properties this evaluator reads; any other on an alarm is refused, so it is never ignored unnoticed. */
const understood = new Set(
  'AlarmName AlarmDescription AlarmActions OKActions ActionsEnabled ComparisonOperator EvaluationPeriods DatapointsToAlarm Threshold TreatMissingData Metrics MetricName Namespace Dimensions Statistic ExtendedStatistic Period Unit'.split(
    ' ',
  ),
);

/** An AWS::CloudWatch::Alarm's properties, read as CloudWatch reads them. */
export const metricAlarmModel = (logicalId: string, p: Props): MetricAlarmModel => {
  const unknown = Object.keys(p).filter((key) => !understood.has(key));
  if (unknown.length > 0) throw new Error(`${logicalId}: ${unknown.join(', ')} not modelled`);
  const queries: Query[] =
    p.Metrics === undefined
      ? [
          {
            id: 'm',
            metric: { namespace: String(p.Namespace), name: String(p.MetricName), dimensions: dims(p.Dimensions) },
            stat: String(p.Statistic ?? p.ExtendedStatistic),
            periodMinutes: minutes(p.Period),
          },
        ]
      : (p.Metrics as Props[]).map((q) => {
          if (q.Expression !== undefined) return { id: String(q.Id), expression: String(q.Expression) };
          const stat = q.MetricStat as { Metric: Props; Period: number; Stat: string };
          const metric = {
            namespace: String(stat.Metric.Namespace),
            name: String(stat.Metric.MetricName),
            dimensions: dims(stat.Metric.Dimensions),
          };
          return { id: String(q.Id), metric, stat: stat.Stat, periodMinutes: minutes(stat.Period) };
        });
  const returned =
    p.Metrics === undefined ? 'm' : String((p.Metrics as Props[]).find((q) => q.ReturnData === undefined || q.ReturnData === true)!.Id);
  const periods = queries.flatMap((query) => ('periodMinutes' in query ? [query.periodMinutes] : []));
  if (new Set(periods).size !== 1) throw new Error(`${logicalId}: "each metric must be using the same period"`);
  return {
    logicalId,
    name: String(p.AlarmName),
    queries,
    returned,
    periodMinutes: periods[0]!,
    evaluationPeriods: Number(p.EvaluationPeriods),
    datapointsToAlarm: Number(p.DatapointsToAlarm ?? p.EvaluationPeriods),
    threshold: Number(p.Threshold),
    comparison: String(p.ComparisonOperator),
    treatMissingData: (p.TreatMissingData ?? 'missing') as MetricAlarmModel['treatMissingData'],
  };
};

const breaches = (comparison: string, value: number, threshold: number) => {
  switch (comparison) {
    case 'GreaterThanOrEqualToThreshold':
      return value >= threshold;
    case 'GreaterThanThreshold':
      return value > threshold;
    case 'LessThanThreshold':
      return value < threshold;
    case 'LessThanOrEqualToThreshold':
      return value <= threshold;
    default:
      throw new Error(`comparison ${comparison} is not modelled`);
  }
};

/**
 * CloudWatch retrieves more datapoints than Evaluation Periods (the evaluation range): the
 * guide's example retrieves 5 for 3. Two more than N here.
 */
export const evaluationRange = (evaluationPeriods: number) => evaluationPeriods + 2;

/**
 * The state from the evaluation range's datapoints, oldest first, and the state before, as the
 * guide's "How alarm state is evaluated when data is missing" says: with at least N datapoints,
 * the most recent N; with fewer, those and as few filled-in ones as make N; none at all, the
 * treatment alone decides. ALARM when at least M of the N breach.
 */
export const stateFrom = (
  values: Series,
  alarm: Pick<MetricAlarmModel, 'evaluationPeriods' | 'datapointsToAlarm' | 'threshold' | 'comparison' | 'treatMissingData'>,
  previous: AlarmState,
): AlarmState => {
  const { evaluationPeriods: n, datapointsToAlarm: m, treatMissingData: treatment } = alarm;
  const present = values.filter((value): value is number => value !== undefined);
  const verdict = (breaching: number) => (breaching >= m ? 'ALARM' : 'OK');
  const breachingOf = (list: number[]) => list.filter((value) => breaches(alarm.comparison, value, alarm.threshold)).length;
  if (present.length >= n) return verdict(breachingOf(present.slice(-n)));
  if (present.length === 0) {
    if (treatment === 'breaching') return 'ALARM';
    if (treatment === 'notBreaching') return 'OK';
    return treatment === 'ignore' ? previous : 'INSUFFICIENT_DATA';
  }
  const filled = n - present.length;
  const asBreaching = verdict(breachingOf(present) + filled);
  const asNotBreaching = verdict(breachingOf(present));
  if (treatment === 'breaching') return asBreaching;
  if (treatment === 'notBreaching') return asNotBreaching;
  // The guide's tables for `ignore` and `missing` with some datapoints missing follow no rule this
  // evaluator can state where the filled-in value would decide: refused, so no scenario leans on a guess.
  if (asBreaching === asNotBreaching) return asBreaching;
  throw new Error(`a partly missing evaluation range under "${treatment}" where the missing datapoints decide is not modelled`);
};

/** The periods of the evaluation range at minute `t` (their first minutes, oldest first), and the newest minute seen. */
const rangeAt = (alarm: MetricAlarmModel, t: number, model: EvaluationModel) => {
  const seen = t - model.delayMinutes;
  const p = alarm.periodMinutes;
  const newest = {
    complete: Math.floor((seen + 1) / p) * p - p,
    partial: Math.floor(seen / p) * p,
    clock: t - p + 1,
  }[model.periods];
  const count = evaluationRange(alarm.evaluationPeriods);
  return { seen, starts: Array.from({ length: count }, (_, i) => newest - (count - 1 - i) * p) };
};

/** The returned series of an alarm's queries over the evaluation range at minute `t`. */
export const seriesAt = (alarm: MetricAlarmModel, store: MetricStore, t: number, model: EvaluationModel): Series => {
  const { seen, starts } = rangeAt(alarm, t, model);
  const cache = new Map<string, Series>();
  const byId = new Map(alarm.queries.map((query) => [query.id, query]));
  const lookup = (id: string): Series => {
    const known = cache.get(id);
    if (known !== undefined) return known;
    const query = byId.get(id);
    if (query === undefined) throw new Error(`${alarm.name}: no metric or expression ${id}`);
    const series =
      'expression' in query
        ? evaluateExpression(query.expression, { length: starts.length, lookup, reading: model.reading })
        : starts.map((start) => store.statistic(query.metric, query.stat, start, Math.min(start + query.periodMinutes - 1, seen)));
    cache.set(id, series);
    return series;
  };
  return lookup(alarm.returned);
};

/** Alarms over AWS/DynamoDB metrics ignore missing data, whatever they say (PutMetricAlarm's TreatMissingData). */
export const effectiveTreatment = (alarm: MetricAlarmModel): MetricAlarmModel['treatMissingData'] =>
  alarm.queries.some((query) => 'metric' in query && query.metric.namespace === 'AWS/DynamoDB') ? 'ignore' : alarm.treatMissingData;
