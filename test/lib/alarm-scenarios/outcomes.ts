/**
 * A played scenario's alarms (./simulate.ts), evaluated minute by minute (../cloudwatch/alarm-timeline.ts):
 * their states, and what a scenario's checks read of them.
 */
import type { AlarmState, EvaluationModel } from '../cloudwatch/alarm-evaluator.ts';
import { timeline } from '../cloudwatch/alarm-timeline.ts';
import type { MetricStore } from '../cloudwatch/metric-store.ts';
import type { Template } from '../template.ts';

/**
 * Each alarm's first minute in ALARM after the start (undefined: never), and whether it was in
 * ALARM in the warm-up's second half (its first half is the alarms' start: an evaluation range
 * reaching back before any traffic, where a missing canary run counts as breaching).
 */
export type Outcome = { readonly firstAlarm: number | undefined; readonly alarmedBefore: boolean };

type Evaluated = { readonly start: number; readonly warmUp: number; readonly minutes: number; readonly settle: number };

/**
 * Every alarm's states over a scenario, from its warm-up's start until `settle` minutes after its
 * end, under one evaluation model. Given the states of its `base` (./playBase), only the alarms
 * that read what the seed added are evaluated again, from the start.
 */
export const scenarioStates = (
  template: Template,
  store: MetricStore,
  span: Evaluated,
  model: EvaluationModel,
  base?: ReadonlyMap<string, readonly AlarmState[]>,
): Map<string, AlarmState[]> =>
  timeline(
    template,
    store,
    { from: span.start - span.warmUp, to: span.start + span.minutes + span.settle },
    model,
    base === undefined ? undefined : { states: base, from: span.start, changed: new Set(store.ownKeys()) },
  );

/** Each alarm's outcome (`Outcome`), from its states over the scenario (./scenarioStates). */
export const outcomesOf = (states: ReadonlyMap<string, readonly AlarmState[]>, span: Pick<Evaluated, 'warmUp'>): Map<string, Outcome> =>
  new Map(
    [...states].map(([name, list]) => {
      const first = list.indexOf('ALARM', span.warmUp);
      const settled = list.slice(Math.floor(span.warmUp / 2), span.warmUp);
      return [name, { firstAlarm: first === -1 ? undefined : first - span.warmUp, alarmedBefore: settled.includes('ALARM') }];
    }),
  );

/** The scenario's alarms under one evaluation model (./scenarioStates, ./outcomesOf). */
export const outcomes = (template: Template, store: MetricStore, span: Evaluated, model: EvaluationModel): Map<string, Outcome> =>
  outcomesOf(scenarioStates(template, store, span, model), span);
