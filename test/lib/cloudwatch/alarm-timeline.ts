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
import type { MetricStore } from './metric-store.ts';

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

/**
 * The state of every alarm at each minute from `from` to `to` (included), from INSUFFICIENT_DATA
 * at `from` (as a new alarm: start early enough for the states to settle). Metric alarms first,
 * then composites, which change as soon as a child does.
 */
export const timeline = (
  template: Template,
  store: MetricStore,
  span: { readonly from: number; readonly to: number },
  model: EvaluationModel,
): Map<string, AlarmState[]> => {
  const { metric, composite } = templateAlarms(template);
  const states = new Map<string, AlarmState[]>([...metric, ...composite].map((alarm) => [alarm.name, []]));
  const current = new Map<string, AlarmState>([...metric, ...composite].map((alarm) => [alarm.logicalId, 'INSUFFICIENT_DATA']));
  for (let t = span.from; t <= span.to; t++) {
    for (const alarm of metric) {
      const next = stateFrom(
        seriesAt(alarm, store, t, model),
        { ...alarm, treatMissingData: effectiveTreatment(alarm) },
        current.get(alarm.logicalId)!,
      );
      current.set(alarm.logicalId, next);
      states.get(alarm.name)!.push(next);
    }
    for (const alarm of composite) {
      const next = ruleHolds(alarm.rule, (child) => current.get(child) ?? 'INSUFFICIENT_DATA') ? 'ALARM' : 'OK';
      current.set(alarm.logicalId, next);
      states.get(alarm.name)!.push(next);
    }
  }
  return states;
};
