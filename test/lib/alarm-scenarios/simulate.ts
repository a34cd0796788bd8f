/**
 * A scenario (./scenarios.ts) played against a synthesized stage: each minute's requests, each
 * invocation sent to the old or the new version by CodeDeploy's weight (every tenth to the new one
 * while it has 10 %), turned into what CloudWatch would hold (./emissions.ts), then every alarm of
 * the template evaluated minute by minute (../cloudwatch/alarm-timeline.ts).
 */
import type { FunctionName } from '../../../infra/registry.ts';
import { longestBusyWaitMs, mostBusyTries } from '../../../functions/canary/smoke-check.ts';
import { metricNames, probeMetricsNamespace } from '../../../shared/observability.ts';
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

/** The stage as its alarms name it: each function's name, live alias and the version a deploy moves it to; the canary's name; the service name. */
export type StageNames = {
  readonly functions: Readonly<Record<FunctionName, TemplateFunction & { readonly newVersion: string }>>;
  readonly canaryName: string;
  /** The `service` dimension of the service's own metrics (the probes' ProbeBusy among them). */
  readonly service: string;
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

/**
 * What CloudWatch holds of one request, whether its answer differs from the good build's, and
 * whether it is a documented refusal (429, or 503 with Retry-After) with its Retry-After.
 */
export type Played = {
  readonly datums: Datum[];
  readonly answeredWrongly: boolean;
  readonly busy?: { readonly retryAfterSeconds?: number };
  /** Datums published when a long invocation ends, `minutes` after it started, and dated then. */
  readonly later?: { readonly minutes: number; readonly datums: Datum[] };
};

/**
 * An invocation longer than this is seen by its alarms only when it ends: its own metrics dated at
 * that end (ListsRanTooLong) count then; Lambda's, dated at its start (Lambda's "The timestamp on a
 * metric reflects when the function was invoked"), reach CloudWatch after the one 5-minute period a
 * guard evaluates, and are left out.
 */
const longInvocationMs = 5 * 60_000;

/** What CloudWatch holds of an invocation, and when: at its start, or (a long one) when it ends. */
const emitted = (now: Datum[], lambda: Datum[], answer: FunctionRun): Pick<Played, 'datums' | 'later'> => {
  if (answer.durationMs < longInvocationMs) return { datums: [...now, ...lambda] };
  const atEnd = (datum: Datum) => datum.name === metricNames.listsRanTooLong;
  return {
    datums: now.filter((datum) => !atEnd(datum)),
    later: { minutes: Math.ceil(answer.durationMs / 60_000), datums: now.filter(atEnd) },
  };
};

/** A documented refusal, as the synthetic client reads one (functions/canary/smoke-check.ts). */
const busyOf = (answer: FunctionRun): Played['busy'] =>
  answer.status === 429 || (answer.status === 503 && answer.retryAfterSeconds !== undefined)
    ? { retryAfterSeconds: answer.retryAfterSeconds }
    : undefined;

/**
 * One check of the synthetic client, as functions/canary/smoke-check.ts runs it: a busy answer is
 * waited out and the check asked again, up to `mostBusyTries` (at once BUSY when its Retry-After is
 * longer than the client waits), each try routed again by CodeDeploy's weight (`ask` plays one
 * request). The check fails only on a wrong answer that is not busy; busy at every try, it is BUSY.
 */
export const probeCheck = (ask: () => Played): { readonly datums: Datum[]; readonly outcome: 'pass' | 'fail' | 'busy' } => {
  const datums: Datum[] = [];
  for (let tries = 1; ; tries++) {
    const played = ask();
    // A probe's list is bounded: it never runs long.
    datums.push(...played.datums, ...(played.later?.datums ?? []));
    if (played.busy === undefined) return { datums, outcome: played.answeredWrongly ? 'fail' : 'pass' };
    const waitMs = (played.busy.retryAfterSeconds ?? 1) * 1000;
    if (tries === mostBusyTries || waitMs > longestBusyWaitMs) return { datums, outcome: 'busy' };
  }
};

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
      ...emitted(asVersion(answer.emf, label), lambdaDatapoints(names.functions[fn], label, asLambdaSaw(answer, scenario)), answer),
    };
  };
  const gateway = gatewayOf(template);
  // A request API Gateway refuses itself, on the cancel route (any route would do).
  const refused = (type: 'UNAUTHORIZED' | 'THROTTLED') => gateway(routeFor.cancelOrder, type === 'THROTTLED' ? 429 : 401, 20, type);
  return (request: Request, deploying: boolean): Played => {
    switch (request.kind) {
      case 'call': {
        const route = routeFor[runs[request.run] as Exclude<FunctionName, 'authorizer'>];
        const { answer, wrong, datums, later } = invoke(request.run, deploying);
        const times = runTimes[request.run];
        const busy = busyOf(answer);
        return {
          datums: [...datums, ...gateway(route, answer.status, (route.streaming ? times.totalMs : times.answerMs) + 10)],
          answeredWrongly: wrong,
          ...(busy === undefined ? {} : { busy }),
          ...(later === undefined ? {} : { later }),
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
 * then its own from minute `start`, and the synthetic client's run every minute (its own key's
 * Allow renewed every 5 minutes): each check as `probeCheck` runs it; the run fails when a check
 * failed, and publishes how many were BUSY (ProbeBusy, 0 included).
 */
export const playScenario = (stage: Stage, scenario: Scenario, span: { start: number; warmUp: number }) => {
  const store = new MetricStore();
  const play = player(stage, scenario);
  for (let minute = span.start - span.warmUp; minute < span.start + scenario.minutes; minute++) {
    const deploying = minute >= span.start && scenario.deploy !== undefined;
    const traffic = minute < span.start ? (scenario.before ?? scenario.traffic) : scenario.traffic;
    const keep = (played: Pick<Played, 'datums' | 'later'>) => {
      for (const datum of played.datums) store.add(minute, datum);
      for (const datum of played.later?.datums ?? []) store.add(minute + played.later!.minutes, datum);
    };
    for (const request of requestsOf(traffic, minute)) keep(play(request, deploying));
    if (!scenario.probes) continue;
    const checks = [...probeRun, ...(minute % 5 === 0 ? [{ kind: 'authorize' } as const] : [])].map((request) =>
      probeCheck(() => play(request, deploying)),
    );
    for (const check of checks) keep(check);
    const failed = checks.some(({ outcome }) => outcome === 'fail');
    const busy = checks.filter(({ outcome }) => outcome === 'busy').length;
    const canary = { CanaryName: stage.names.canaryName };
    store.add(minute, { namespace: 'CloudWatchSynthetics', name: 'SuccessPercent', dimensions: canary, value: failed ? 0 : 100 });
    const service = { service: stage.names.service };
    store.add(minute, { namespace: probeMetricsNamespace, name: metricNames.probeBusy, dimensions: service, value: busy });
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
