/**
 * Every alarm of a template, metric and composite, evaluated minute by minute (./alarm-evaluator.ts)
 * over a span of minutes: the state of each alarm at each minute, by alarm name.
 */
import { resolve, type Template } from '../template.ts';
import {
  type AlarmState,
  type EvaluationModel,
  effectiveTreatment,
  type MetricAlarmModel,
  metricAlarmModel,
  seriesAt,
  stateFrom,
} from './alarm-evaluator.ts';
import { metricKey, type MetricStore } from './metric-store.ts';

export type CompositeModel = { readonly logicalId: string; readonly name: string; readonly rule: string };

/** The template's alarms as the evaluator reads them. */
export const templateAlarms = (template: Template) => {
  const metric: MetricAlarmModel[] = [];
  const composite: CompositeModel[] = [];
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type === 'AWS::CloudWatch::Alarm') metric.push(metricAlarmModel(logicalId, resource.Properties));
    if (resource.Type === 'AWS::CloudWatch::CompositeAlarm')
      composite.push({ logicalId, name: String(resource.Properties.AlarmName), rule: String(resolve(resource.Properties.AlarmRule)) });
  }
  return { metric, composite };
};

/**
 * A composite alarm's rule (ALARM("arn"), OK(…), INSUFFICIENT_DATA(…), AND, OR, NOT, TRUE, FALSE,
 * parentheses) against its children's states, each named in the template as `${LogicalId.Arn}`.
 */
export const ruleHolds = (rule: string, stateOf: (logicalId: string) => AlarmState): boolean => {
  const tokens = rule.match(/ALARM|OK|INSUFFICIENT_DATA|AND|OR|NOT|TRUE|FALSE|\(|\)|"[^"]*"/g) ?? [];
  let at = 0;
  const take = () => tokens[at++];
  const or = (): boolean => {
    let value = and();
    while (tokens[at] === 'OR') {
      take();
      value = and() || value;
    }
    return value;
  };
  const and = (): boolean => {
    let value = not();
    while (tokens[at] === 'AND') {
      take();
      value = not() && value;
    }
    return value;
  };
  const not = (): boolean => (tokens[at] === 'NOT' ? (take(), !not()) : primary());
  const primary = (): boolean => {
    const token = take();
    if (token === '(') {
      const value = or();
      if (take() !== ')') throw new Error(`composite rule: ) expected in ${rule}`);
      return value;
    }
    if (token === 'TRUE' || token === 'FALSE') return token === 'TRUE';
    if (token === 'ALARM' || token === 'OK' || token === 'INSUFFICIENT_DATA') {
      take();
      const arn = take()!;
      take();
      const child = /^"\$\{(\w+)\.Arn\}"$/.exec(arn)?.[1];
      if (child === undefined) throw new Error(`composite rule: ${arn} names no alarm of the template`);
      return stateOf(child) === token;
    }
    throw new Error(`composite rule: unexpected ${String(token)} in ${rule}`);
  };
  const value = or();
  if (at !== tokens.length) throw new Error(`composite rule: ${tokens.slice(at).join(' ')} left over`);
  return value;
};

/** The alarms of each template, read once: a scenario evaluates the same template many times. */
const read = new WeakMap<Template, ReturnType<typeof templateAlarms>>();

/**
 * What an earlier timeline of the same span already knows: its states (by alarm name), and from
 * which minute on the store now differs from its store, in which metrics (`changed`, by key). An
 * alarm that reads none of them keeps its states; the others keep theirs before `from` and are
 * evaluated on from there.
 */
export type Known = {
  readonly states: ReadonlyMap<string, readonly AlarmState[]>;
  readonly from: number;
  readonly changed: ReadonlySet<string>;
};

/**
 * The state of every alarm at each minute from `from` to `to` (included), from INSUFFICIENT_DATA
 * at `from` (as a new alarm: start early enough for the states to settle). Each metric alarm on its
 * own, then the composites minute by minute, which change as soon as a child does.
 */
export const timeline = (
  template: Template,
  store: MetricStore,
  span: { readonly from: number; readonly to: number },
  model: EvaluationModel,
  known?: Known,
): Map<string, AlarmState[]> => {
  let alarms = read.get(template);
  if (alarms === undefined) read.set(template, (alarms = templateAlarms(template)));
  const { metric, composite } = alarms;
  const byLogicalId = new Map<string, AlarmState[]>();
  const states = new Map<string, AlarmState[]>();
  const keep = (alarm: { logicalId: string; name: string }, list: AlarmState[]) => {
    byLogicalId.set(alarm.logicalId, list);
    states.set(alarm.name, list);
  };
  for (const alarm of metric) {
    const before = known?.states.get(alarm.name);
    const reads = alarm.queries.flatMap((query) => ('metric' in query ? [metricKey(query.metric)] : []));
    if (before !== undefined && !reads.some((key) => known!.changed.has(key))) {
      keep(alarm, [...before]);
      continue;
    }
    const from = before === undefined ? span.from : known!.from;
    const list = before === undefined ? [] : before.slice(0, from - span.from);
    const evaluated = { ...alarm, treatMissingData: effectiveTreatment(alarm) };
    for (let t = from; t <= span.to; t++)
      list.push(stateFrom(seriesAt(alarm, store, t, model), evaluated, list.at(-1) ?? 'INSUFFICIENT_DATA'));
    keep(alarm, list);
  }
  for (const alarm of composite) {
    const list = Array.from({ length: span.to - span.from + 1 }, (_, i): AlarmState =>
      ruleHolds(alarm.rule, (child) => byLogicalId.get(child)?.[i] ?? 'INSUFFICIENT_DATA') ? 'ALARM' : 'OK',
    );
    keep(alarm, list);
  }
  return states;
};
