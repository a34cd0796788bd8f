/**
 * A scenario (./scenarios.ts) played against a synthesized stage: each minute's requests, each
 * invocation sent to the old or the new version by CodeDeploy's weight (every tenth to the new one
 * while it has 10 %), turned into what CloudWatch would hold (./emissions.ts), then every alarm of
 * the template evaluated minute by minute (../cloudwatch/alarm-timeline.ts).
 */
import type { FunctionName } from '../../../infra/registry.ts';
import { metricNames } from '../../../shared/observability.ts';
import { type Route } from '../../../shared/routes.ts';
import { routeOf } from '../../../infra/registry.ts';
import type { AlarmState, EvaluationModel } from '../cloudwatch/alarm-evaluator.ts';
import { timeline } from '../cloudwatch/alarm-timeline.ts';
import { type Datum, MetricStore } from '../cloudwatch/metric-store.ts';
import type { Template } from '../template.ts';
import { asVersion, type FunctionRun, gatewayDatapoints, lambdaDatapoints, type TemplateFunction } from './emissions.ts';
import type { FaultName } from './faults.ts';
import { probeRun, type Request, type RunName, runs, runTimes, type Scenario, type Traffic } from './scenarios.ts';

/** The shipped bundles' runs: today's build of each function, and the broken builds' runs of theirs. */
export type Catalog = {
  readonly good: Readonly<Record<RunName, FunctionRun>>;
  readonly broken: Readonly<Partial<Record<FaultName, Partial<Record<RunName, FunctionRun>>>>>;
};

/** The stage as its alarms name it: each function's name, live alias and the version a deploy moves it to; the canary's name. */
export type StageNames = {
  readonly functions: Readonly<Record<FunctionName, TemplateFunction & { readonly newVersion: string }>>;
  readonly canaryName: string;
};

/** The version before the deploy, as a label of the version dimension. */
const oldVersion = 'the version before';
/** CodeDeploy's first step: 10 % of the invocations. */
const newShare = 0.1;

const routeFor: Record<Exclude<FunctionName, 'authorizer'>, Route> = {
  listOrders: routeOf('listOrders'),
  cancelOrder: routeOf('cancelOrder'),
  listOrdersPaged: routeOf('listOrdersPaged'),
};

type Played = { readonly datums: Datum[]; readonly answeredWrongly: boolean };

type Stage = { readonly template: Template; readonly names: StageNames; readonly catalog: Catalog };

/** An invocation as Lambda counts it: a list its client left resolves, and whether Lambda counts it in Errors all the same, AWS does not say. */
const asLambdaSaw = (answer: FunctionRun, scenario: Scenario): FunctionRun =>
  scenario.leftListsCountedAsErrors && answer.emf.some((datum) => datum.name === metricNames.listsLeftEarly)
    ? { ...answer, failed: true }
    : answer;

/** What API Gateway's metrics and access log hold of a request answered `status` on `route` (none: no route matched). */
const gatewayOf = (template: Template) => (route: Route | undefined, status: number, latencyMs: number, errorResponseType?: string) =>
  gatewayDatapoints(template, {
    route,
    method: route?.method ?? 'GET',
    status,
    latencyMs,
    ...(errorResponseType ? { errorResponseType } : {}),
  });

/**
 * How each request of `scenario` is answered: every invocation of the deployed function sent to its
 * new version by CodeDeploy's weight (every tenth while it has 10 %), answered by that version's
 * build, and what CloudWatch holds of it.
 */
const player = ({ template, names, catalog }: Stage, scenario: Scenario) => {
  const invocations = new Map<FunctionName, number>();
  const versionFor = (fn: FunctionName, deploying: boolean): 'new' | 'old' => {
    const k = invocations.get(fn) ?? 0;
    invocations.set(fn, k + 1);
    return deploying && scenario.deploy?.fn === fn && Math.floor((k + 1) * newShare) > Math.floor(k * newShare) ? 'new' : 'old';
  };
  const invoke = (run: RunName, deploying: boolean) => {
    const fn = runs[run];
    const version = versionFor(fn, deploying);
    const fault = scenario.deploy?.fault;
    const answer = (version === 'new' && fault !== undefined ? catalog.broken[fault]?.[run] : undefined) ?? catalog.good[run];
    const label = version === 'new' ? names.functions[fn].newVersion : oldVersion;
    // The probes know the right answer: the good build's.
    const wrong = answer.status !== catalog.good[run].status;
    return {
      answer,
      wrong,
      datums: [...asVersion(answer.emf, label), ...lambdaDatapoints(names.functions[fn], label, asLambdaSaw(answer, scenario))],
    };
  };
  const gateway = gatewayOf(template);
  // A request API Gateway refuses itself, on the cancel route (any route would do).
  const refused = (type: 'UNAUTHORIZED' | 'THROTTLED') => gateway(routeFor.cancelOrder, type === 'THROTTLED' ? 429 : 401, 20, type);
  return (request: Request, deploying: boolean): Played => {
    switch (request.kind) {
      case 'call': {
        const route = routeFor[runs[request.run] as Exclude<FunctionName, 'authorizer'>];
        const { answer, wrong, datums } = invoke(request.run, deploying);
        const times = runTimes[request.run];
        return {
          datums: [...datums, ...gateway(route, answer.status, (route.streaming ? times.totalMs : times.answerMs) + 10)],
          answeredWrongly: wrong,
        };
      }
      case 'authorize': {
        // A refused valid key: that request is answered 401 (the rest of the key's requests are counted among the calls).
        const { answer, wrong, datums } = invoke('authorize-valid', deploying);
        return { datums: [...datums, ...(answer.status === 401 ? refused('UNAUTHORIZED') : [])], answeredWrongly: wrong };
      }
      case 'refusedKey': {
        const { wrong, datums } = invoke('authorize-refused', deploying);
        return { datums: [...datums, ...refused('UNAUTHORIZED')], answeredWrongly: wrong };
      }
      case 'malformedKey':
        return { datums: refused('UNAUTHORIZED'), answeredWrongly: false };
      case 'throttled':
        return { datums: refused('THROTTLED'), answeredWrongly: false };
      case 'shed': {
        const datums = [...lambdaDatapoints(names.functions[request.fn], '', 'throttled'), ...gateway(routeFor[request.fn], 500, 15)];
        return { datums, answeredWrongly: false };
      }
      case 'unknownRoute':
        return { datums: gateway(undefined, 404, 5, 'MISSING_AUTHENTICATION_TOKEN'), answeredWrongly: false };
    }
  };
};

/** A minute's requests of `traffic`. */
const requestsOf = (traffic: Traffic, minute: number) =>
  traffic.flatMap(({ request, count = 1, every }) =>
    every !== undefined ? (minute % every === 0 ? [request] : []) : Array.from({ length: count }, () => request),
  );

/**
 * Plays one scenario into a store: `warmUp` minutes of its traffic before (`before`, if it has one)
 * then its own from minute `start`, and the synthetic client's run every minute (a run fails when
 * one of its answers differs from the good build's; its own key's Allow is renewed every 5 minutes).
 */
export const playScenario = (stage: Stage, scenario: Scenario, span: { start: number; warmUp: number }) => {
  const store = new MetricStore();
  const play = player(stage, scenario);
  for (let minute = span.start - span.warmUp; minute < span.start + scenario.minutes; minute++) {
    const deploying = minute >= span.start && scenario.deploy !== undefined;
    const traffic = minute < span.start ? (scenario.before ?? scenario.traffic) : scenario.traffic;
    for (const request of requestsOf(traffic, minute)) for (const datum of play(request, deploying).datums) store.add(minute, datum);
    if (!scenario.probes) continue;
    const played = [...probeRun, ...(minute % 5 === 0 ? [{ kind: 'authorize' } as const] : [])].map((request) => play(request, deploying));
    for (const datum of played.flatMap(({ datums }) => datums)) store.add(minute, datum);
    const failed = played.some(({ answeredWrongly }) => answeredWrongly);
    const canary = { CanaryName: stage.names.canaryName };
    store.add(minute, { namespace: 'CloudWatchSynthetics', name: 'SuccessPercent', dimensions: canary, value: failed ? 0 : 100 });
  }
  return store;
};

/**
 * Each alarm's first minute in ALARM after the start (undefined: never), and whether it was in
 * ALARM in the warm-up's second half (its first half is the alarms' start: an evaluation range
 * reaching back before any traffic, where a missing canary run counts as breaching).
 */
export type Outcome = { readonly firstAlarm: number | undefined; readonly alarmedBefore: boolean };

/** The scenario's alarms under one evaluation model: evaluated from the warm-up's start until `settle` minutes after the scenario's end. */
export const outcomes = (
  template: Template,
  store: MetricStore,
  span: { start: number; warmUp: number; minutes: number; settle: number },
  model: EvaluationModel,
): Map<string, Outcome> => {
  const from = span.start - span.warmUp;
  const states = timeline(template, store, { from, to: span.start + span.minutes + span.settle }, model);
  return new Map(
    [...states].map(([name, list]: [string, AlarmState[]]) => {
      const after = list.slice(span.warmUp);
      const first = after.indexOf('ALARM');
      const settled = list.slice(Math.floor(span.warmUp / 2), span.warmUp);
      return [name, { firstAlarm: first === -1 ? undefined : first, alarmedBefore: settled.includes('ALARM') }];
    }),
  );
};
