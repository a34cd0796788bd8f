/**
 * The alarm scenarios' player (test/lib/alarm-scenarios/simulate.ts) routes each invocation of a
 * deployed function to its new version at random with CodeDeploy's weight (a seed replays the same
 * draws), and runs the synthetic client as functions/canary/smoke-check.ts does: a busy answer (429,
 * or 503 with Retry-After) is waited out and asked again, each try routed again; a run fails only on
 * a wrong answer that is not busy, and counts the checks busy at every try in ProbeBusy. A seed's
 * store over its base's, and its states over the base's states, are the whole run's.
 */
import { describe, expect, it } from 'vitest';
import { mostBusyTries } from '../../functions/canary/smoke-check.ts';
import type { FunctionName } from '../../infra/registry.ts';
import { metricNames, probeMetricsNamespace } from '../../shared/observability.ts';
import type { FunctionRun } from '../lib/alarm-scenarios/emissions.ts';
import type { Scenario } from '../lib/alarm-scenarios/scenarios.ts';
import { type RunName, runs } from '../lib/alarm-scenarios/traffic.ts';
import {
  type Catalog,
  type Played,
  playBase,
  playScenario,
  playSeed,
  probeCheck,
  seededRandom,
  type StageNames,
} from '../lib/alarm-scenarios/simulate.ts';
import { scenarioStates } from '../lib/alarm-scenarios/outcomes.ts';
import type { EvaluationModel } from '../lib/cloudwatch/alarm-evaluator.ts';
import type { Template } from '../lib/template.ts';

const answer = (status: number, retryAfterSeconds?: number): FunctionRun => ({
  emf: [],
  status,
  failed: false,
  durationMs: 10,
  ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
});

/** `ask` answering from `answers` in turn, counting its calls. */
const asking = (answers: Played[]) => {
  let calls = 0;
  return { ask: () => answers[Math.min(calls++, answers.length - 1)]!, calls: () => calls };
};
const busy = (retryAfterSeconds?: number): Played => ({ datums: [], answeredWrongly: true, busy: { retryAfterSeconds } });
const right: Played = { datums: [], answeredWrongly: false };
const wrong: Played = { datums: [], answeredWrongly: true };

describe("one check of the synthetic client (the player's probeCheck)", () => {
  it('asks again after a busy answer and passes when a later try is answered rightly', () => {
    const check = asking([busy(1), busy(1), right]);
    expect(probeCheck(check.ask).outcome).toBe('pass');
    expect(check.calls()).toBe(3);
  });

  it('fails only on a wrong answer that is not busy', () => {
    expect(probeCheck(asking([busy(1), wrong]).ask).outcome).toBe('fail');
    expect(probeCheck(asking([wrong]).ask).outcome).toBe('fail');
  });

  it("is BUSY after the smoke check's most tries, every one busy", () => {
    const check = asking([busy(1)]);
    expect(probeCheck(check.ask).outcome).toBe('busy');
    expect(check.calls()).toBe(mostBusyTries);
  });

  it('is BUSY at once when Retry-After is longer than the client waits', () => {
    const check = asking([busy(60), right]);
    expect(probeCheck(check.ask).outcome).toBe('busy');
    expect(check.calls()).toBe(1);
  });
});

/** A stage of four functions with no metric filters: only what the functions and Lambda publish counts here. */
const template: Template = {
  Resources: {
    Api: { Type: 'AWS::ApiGateway::RestApi', Properties: { Name: 'api' } },
    Stage: {
      Type: 'AWS::ApiGateway::Stage',
      Properties: {
        StageName: 'production',
        AccessLogSetting: { Format: '{"status":"$context.status"}', DestinationArn: { 'Fn::GetAtt': ['AccessLogs', 'Arn'] } },
      },
    },
  },
};
const fn = (name: string) => ({ functionName: name, resource: `${name}:live`, newVersion: '2' });
const names: StageNames = {
  functions: { authorizer: fn('a'), listOrders: fn('l'), cancelOrder: fn('c'), listOrdersPaged: fn('p') } as Record<
    FunctionName,
    ReturnType<typeof fn>
  >,
  canaryName: 'canary',
  service: 'store-orders-production',
  tables: { OrdersTable: 'o', ApiKeysTable: 'k', ListLeasesTable: 'l' },
};
const good = Object.fromEntries(
  (Object.keys(runs) as RunName[]).map((run) => [run, answer(run.startsWith('cancel') ? 204 : 200)]),
) as Record<RunName, FunctionRun>;

/** A cancel release whose every cancel answers 503 with Retry-After, at 10 % for 30 minutes, with only the synthetic client running. */
const played = (broken: FunctionRun) => {
  const catalog: Catalog = { good, broken: { cancelUnavailable: { 'cancel-pending': broken, 'cancel-missing': broken } } };
  const scenario: Scenario = {
    id: 'test',
    title: 'test',
    minutes: 30,
    traffic: [],
    deploy: { fn: 'cancelOrder', fault: 'cancelUnavailable' },
    probes: true,
    mustFire: [],
  };
  const store = playScenario({ template, names, catalog }, scenario, { start: 100, warmUp: 0, seed: 1 });
  const values = (namespace: string, name: string, dimensions: Record<string, string>) =>
    store.samples({ namespace, name, dimensions }, 100, 129).flatMap(([value, count]) => Array<number>(count).fill(value));
  return {
    success: values('CloudWatchSynthetics', 'SuccessPercent', { CanaryName: 'canary' }),
    probeBusy: values(probeMetricsNamespace, metricNames.probeBusy, { service: names.service }),
    newInvocations: values('AWS/Lambda', 'Invocations', { FunctionName: 'c', Resource: 'c:live', ExecutedVersion: '2' }),
  };
};

describe('the synthetic client in a scenario', () => {
  it('passes every run when its cancels meet a 503 with Retry-After from a version at 10 %: the retry meets the old one', () => {
    const { success, probeBusy, newInvocations } = played(answer(503, 1));
    // The new version was asked, and answered busy: the checks were retried, not failed.
    expect(newInvocations.length).toBeGreaterThan(0);
    expect(success).toEqual(Array<number>(30).fill(100));
    expect(probeBusy).toEqual(Array<number>(30).fill(0));
  });

  it('fails the runs that meet a wrong answer that is not busy (a 409 from the new version)', () => {
    const { success, probeBusy } = played(answer(409));
    expect(success).toContain(0);
    expect(probeBusy).toEqual(Array<number>(30).fill(0));
  });

  it('counts a check BUSY in ProbeBusy when its Retry-After is longer than the client waits', () => {
    const { success, probeBusy } = played(answer(503, 60));
    expect(success).toEqual(Array<number>(30).fill(100));
    expect(probeBusy.filter((value) => value > 0).length).toBeGreaterThan(0);
  });
});

/** Lambda's Invocations of the cancel function's version `version` in minutes 100 to 129. */
const cancelsOf = (store: ReturnType<typeof playScenario>, version: string) =>
  store
    .samples(
      { namespace: 'AWS/Lambda', name: 'Invocations', dimensions: { FunctionName: 'c', Resource: 'c:live', ExecutedVersion: version } },
      100,
      129,
    )
    .reduce((sum, [, count]) => sum + count, 0);

describe("CodeDeploy's weight, as the player routes it", () => {
  const cancels: Scenario = {
    id: 'cancels',
    title: 'cancels',
    minutes: 30,
    traffic: [{ request: { kind: 'call', run: 'cancel-pending' }, count: 100 }],
    deploy: { fn: 'cancelOrder' },
    probes: false,
    mustFire: [],
  };
  const play = (seed: number) => playScenario({ template, names, catalog: { good, broken: {} } }, cancels, { start: 100, warmUp: 0, seed });

  it('sends each invocation to the new version at random, about one in ten, and the same seed the same way', () => {
    const [first, again, other] = [play(1), play(1), play(2)];
    const newer = cancelsOf(first, '2');
    expect(newer + cancelsOf(first, 'the version before')).toBe(3000);
    // 3,000 draws at 10 %: 300 ± 16 (one standard deviation); 4 of them either way.
    expect(Math.abs(newer - 300)).toBeLessThan(66);
    expect(cancelsOf(again, '2')).toBe(newer);
    expect(cancelsOf(other, '2')).not.toBe(newer);
  });

  it('draws numbers in [0, 1) that a seed replays', () => {
    const draws = (seed: number) => Array.from({ length: 1000 }, seededRandom(seed));
    expect(draws(7)).toEqual(draws(7));
    expect(draws(7).every((value) => value >= 0 && value < 1)).toBe(true);
    expect(draws(7).filter((value) => value < 0.1).length).toBeGreaterThan(70);
    expect(draws(7).filter((value) => value < 0.1).length).toBeLessThan(130);
  });
});

describe("a seed over its scenario's base", () => {
  // An alarm on the new cancel version's failures, one on the list's invocations of every version, one on the canary.
  const alarm = (name: string, metric: string, dimensions: Record<string, string>, statistic = 'Sum') => ({
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      AlarmName: name,
      Namespace: name === 'canary' ? 'CloudWatchSynthetics' : 'AWS/Lambda',
      MetricName: metric,
      Dimensions: Object.entries(dimensions).map(([Name, Value]) => ({ Name, Value })),
      Statistic: statistic,
      Period: 60,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    },
  });
  const withAlarms: Template = {
    Resources: {
      ...template.Resources,
      NewCancels: alarm('new-cancels', 'Invocations', { FunctionName: 'c', Resource: 'c:live', ExecutedVersion: '2' }),
      Lists: alarm('lists', 'Invocations', { FunctionName: 'l' }),
      Canary: alarm('canary', 'SuccessPercent', { CanaryName: 'canary' }, 'Minimum'),
    },
  };
  const scenario: Scenario = {
    id: 'mixed',
    title: 'mixed',
    minutes: 20,
    traffic: [
      { request: { kind: 'call', run: 'cancel-pending' }, count: 5 },
      { request: { kind: 'call', run: 'list-whole' }, count: 2 },
    ],
    deploy: { fn: 'cancelOrder' },
    probes: true,
    mustFire: [],
  };
  const stage = { template: withAlarms, names, catalog: { good, broken: {} } };
  const span = { start: 100, warmUp: 10 };
  const evaluated = { ...span, minutes: 20, settle: 0 };
  const model: EvaluationModel = { reading: 'missing-is-zero', periods: 'clock', delayMinutes: 3 };

  it('holds what a whole run holds, and the states over the base are those of the whole run', () => {
    const base = playBase(stage, scenario, span);
    const seeded = playSeed(stage, scenario, span, base, 5);
    const whole = playScenario(stage, scenario, { ...span, seed: 5 });
    expect(seeded.keys().sort()).toEqual(whole.keys().sort());
    // Each metric's sum and count, minute by minute, from its key (`namespace|name|[[dimension, value], …]`).
    const all = (store: typeof whole, key: string) => {
      const [namespace, name, ...dimensions] = key.split('|');
      const metric = {
        namespace: namespace!,
        name: name!,
        dimensions: Object.fromEntries(JSON.parse(dimensions.join('|')) as [string, string][]),
      };
      return Array.from({ length: 40 }, (_, i) => [
        store.statistic(metric, 'Sum', 90 + i, 90 + i),
        store.statistic(metric, 'SampleCount', 90 + i, 90 + i),
      ]);
    };
    for (const key of whole.keys()) expect(all(seeded, key), key).toEqual(all(whole, key));
    const states = scenarioStates(withAlarms, seeded, evaluated, model, scenarioStates(withAlarms, base, evaluated, model));
    expect(states).toEqual(scenarioStates(withAlarms, whole, evaluated, model));
    // The new version's invocations come from the seed alone: the base never had them.
    expect(cancelsOf(base, '2')).toBe(0);
    expect(states.get('new-cancels')).toContain('ALARM');
  });
});
