/**
 * A scenario (./scenarios.ts) played against a synthesized stage: each minute's requests, each
 * invocation sent to the old or the new version by CodeDeploy's weight, at random as Lambda's
 * weighted alias routing does (a seeded draw per invocation, so a seed replays the same run),
 * turned into what CloudWatch would hold (./emissions.ts); ./outcomes.ts evaluates the alarms on it.
 */
import type { FunctionName } from '../../../infra/registry.ts';
import { longestBusyWaitMs, mostBusyTries } from '../../../functions/canary/smoke-check.ts';
import { metricNames, probeMetricsNamespace } from '../../../shared/observability.ts';
import { type Route } from '../../../shared/routes.ts';
import { routeOf } from '../../../infra/registry.ts';
import { type Datum, MetricStore } from '../cloudwatch/metric-store.ts';
import type { Template } from '../template.ts';
import { asVersion, type FunctionRun, gatewayDatapoints, lambdaDatapoints, type TemplateFunction } from './emissions.ts';
import type { FaultName } from './faults.ts';
import type { Scenario } from './scenarios.ts';
import { invokedBy, probeRun, type Request, type RunName, runs, runTimes, type TableId, type Traffic } from './traffic.ts';

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
  /** Each table's `TableName`, as the template's alarms name it (`${LogicalId}`), by its id in the stack (OrdersTable…). */
  readonly tables: Readonly<Record<TableId, string>>;
};

/** The version before the deploy, as a label of the version dimension. */
const oldVersion = 'the version before';
/** CodeDeploy's first step: 10 % of the invocations. */
export const newShare = 0.1;

/**
 * A seeded stream of numbers in [0, 1) (mulberry32): the same seed, the same draws, so a
 * scenario's run under one seed is the same on every machine.
 */
export const seededRandom = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4_294_967_296;
  };
};

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
export const probeCheck = (ask: () => Played): { readonly tries: Played[]; readonly outcome: 'pass' | 'fail' | 'busy' } => {
  const tries: Played[] = [];
  for (;;) {
    const played = ask();
    tries.push(played);
    if (played.busy === undefined) return { tries, outcome: played.answeredWrongly ? 'fail' : 'pass' };
    const waitMs = (played.busy.retryAfterSeconds ?? 1) * 1000;
    if (tries.length === mostBusyTries || waitMs > longestBusyWaitMs) return { tries, outcome: 'busy' };
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

/** A Lambda sandbox that crashed mid-request: Lambda counts an error, the function printed nothing, API Gateway answers 502. */
const crashed: FunctionRun = { emf: [], status: 502, failed: true, durationMs: 40 };

/** What API Gateway answers itself: before the authorizer (a malformed key, a throttle, no route), after it (a refusal, a failure). */
const gatewayAnswers = (template: Template) => {
  const gateway = gatewayOf(template);
  // A request API Gateway refuses itself, on the cancel route (any route would do).
  const refused = (type: 'UNAUTHORIZED' | 'THROTTLED') => gateway(routeFor.cancelOrder, type === 'THROTTLED' ? 429 : 401, 20, type);
  const authorizerFailed = () => gateway(routeFor.cancelOrder, 500, 30, 'AUTHORIZER_FAILURE');
  return {
    gateway,
    refused,
    authorizerFailed,
    /** After the authorizer: a refusal 401, a failure 500; an Allow, `allowed` (the call goes on). */
    afterAuthorizer: (status: number, allowed: Datum[]) =>
      status === 401 ? refused('UNAUTHORIZED') : status === 500 ? authorizerFailed() : allowed,
  };
};

/** What CloudWatch holds of a request no function's version answers: API Gateway alone, a Lambda throttle, a DynamoDB fault. */
const answeredAlone = (template: Template, names: StageNames) => {
  const { gateway, refused, authorizerFailed } = gatewayAnswers(template);
  return (request: Request): Played | undefined => {
    switch (request.kind) {
      case 'malformedKey':
        return { datums: refused('UNAUTHORIZED'), answeredWrongly: false };
      case 'throttled':
        return { datums: refused('THROTTLED'), answeredWrongly: false };
      case 'shed': {
        const answered = request.fn === 'authorizer' ? authorizerFailed() : gateway(routeFor[request.fn], 500, 15);
        return { datums: [...lambdaDatapoints(names.functions[request.fn], '', 'throttled'), ...answered], answeredWrongly: false };
      }
      case 'dynamoDb': {
        const { table, operation, metric } = request;
        const dimensions = { TableName: names.tables[table], ...(operation === undefined ? {} : { Operation: operation }) };
        return { datums: [{ namespace: 'AWS/DynamoDB', name: metric, dimensions, value: 1 }], answeredWrongly: false };
      }
      case 'unknownRoute':
        return { datums: gateway(undefined, 404, 5, 'MISSING_AUTHENTICATION_TOKEN'), answeredWrongly: false };
      default:
        return undefined;
    }
  };
};

/**
 * How one request is answered by `version` of the function it invokes, and what CloudWatch holds
 * of it: the same every time (a request kind and a version always answer alike), so the player
 * keeps each.
 */
const answering = ({ template, names, catalog }: Stage, scenario: Scenario) => {
  const { gateway, refused, authorizerFailed, afterAuthorizer } = gatewayAnswers(template);
  const alone = answeredAlone(template, names);
  const invoke = (run: RunName | 'crash', fn: FunctionName, version: 'new' | 'old') => {
    const fault = scenario.deploy?.fault;
    const good = run === 'crash' ? crashed : catalog.good[run];
    const answer = (run !== 'crash' && version === 'new' && fault !== undefined ? catalog.broken[fault]?.[run] : undefined) ?? good;
    const label = version === 'new' ? names.functions[fn].newVersion : oldVersion;
    return {
      answer,
      // The probes know the right answer: the good build's.
      wrong: answer.status !== good.status,
      ...emitted(asVersion(answer.emf, label), lambdaDatapoints(names.functions[fn], label, asLambdaSaw(answer, scenario)), answer),
    };
  };
  const invoked = (request: Request, version: 'new' | 'old'): Played => {
    switch (request.kind) {
      case 'call': {
        const fn = runs[request.run] as Exclude<FunctionName, 'authorizer'>;
        const route = routeFor[fn];
        const { answer, wrong, datums, later } = invoke(request.run, fn, version);
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
        // A valid key's Allow renewed: the request goes on (counted among the calls), unless refused or failed.
        const { answer, wrong, datums } = invoke('authorize-valid', 'authorizer', version);
        return { datums: [...datums, ...afterAuthorizer(answer.status, [])], answeredWrongly: wrong };
      }
      case 'refusedKey': {
        const { answer, wrong, datums } = invoke('authorize-refused', 'authorizer', version);
        return { datums: [...datums, ...afterAuthorizer(answer.status, refused('UNAUTHORIZED'))], answeredWrongly: wrong };
      }
      case 'authorizerFails':
        return { datums: [...invoke('authorize-unreachable', 'authorizer', version).datums, ...authorizerFailed()], answeredWrongly: true };
      case 'crash':
        return {
          datums: [...invoke('crash', request.fn, version).datums, ...gateway(routeFor[request.fn], 502, 50)],
          answeredWrongly: true,
        };
      default:
        throw new Error(`${request.kind} invokes no function's version`);
    }
  };
  return (request: Request, version: 'new' | 'old'): Played => alone(request) ?? invoked(request, version);
};

/**
 * How each request of `scenario` is answered: an invocation of the deployed function goes to its
 * new version with CodeDeploy's weight, each drawn on its own (`random`), or to the version a
 * request names; between deploys (a scenario without one) every function runs the template's
 * version. Each request kind's answer by each version is made once and kept.
 */
const player = (stage: Stage, scenario: Scenario, random: () => number) => {
  const answer = answering(stage, scenario);
  const kept = new Map<Request, Partial<Record<'new' | 'old', Played>>>();
  const versionFor = (request: Request, deploying: boolean): 'new' | 'old' => {
    const { deploy } = scenario;
    if (deploy === undefined) return 'new';
    if (!deploying || invokedBy(request) !== deploy.fn) return 'old';
    if ('version' in request && request.version !== undefined) return request.version;
    return random() < newShare ? 'new' : 'old';
  };
  return (request: Request, deploying: boolean): Played => {
    const version = versionFor(request, deploying);
    let byVersion = kept.get(request);
    if (byVersion === undefined) kept.set(request, (byVersion = {}));
    return (byVersion[version] ??= answer(request, version));
  };
};

/** A minute's requests of `traffic`, `start` being the scenario's first minute. */
const requestsOf = (traffic: Traffic, minute: number, start: number) =>
  traffic.flatMap(({ request, count = 1, every, at }) => {
    const comes = at !== undefined ? at.includes(minute - start) : every === undefined || minute % every === 0;
    return comes ? Array.from({ length: every === undefined ? count : 1 }, () => request) : [];
  });

type Span = { readonly start: number; readonly warmUp: number };

/**
 * Plays into `store` the minutes `from` to `to` (excluded) of a scenario: the requests `played`
 * picks, those of the synthetic client's run every minute too (its own key's Allow renewed every 5
 * minutes), each check as `probeCheck` runs it; and in the minutes `probes` picks, the run's
 * outcome: it fails when a check failed, and publishes how many were BUSY (ProbeBusy) and how many
 * it could not set up (ProbeSetupFailed: its own order's cancel, when the scenario says it cannot
 * write it), 0 included. A minute's identical answers are added at once.
 */
const playMinutes = (
  stage: Stage,
  scenario: Scenario,
  span: Span,
  into: { store: MetricStore; play: ReturnType<typeof player>; from: number; to: number },
  played: (request: Request, deploying: boolean) => boolean,
  probes: (minute: number) => boolean,
) => {
  const { store, play } = into;
  const canary = { CanaryName: stage.names.canaryName };
  const service = { service: stage.names.service };
  for (let minute = into.from; minute < into.to; minute++) {
    const deploying = minute >= span.start && scenario.deploy !== undefined;
    const traffic = minute < span.start ? (scenario.before ?? scenario.traffic) : scenario.traffic;
    const answered = new Map<Played, number>();
    for (const request of requestsOf(traffic, minute, span.start)) {
      if (!played(request, deploying)) continue;
      const answer = play(request, deploying);
      answered.set(answer, (answered.get(answer) ?? 0) + 1);
    }
    for (const [answer, times] of answered) {
      for (const datum of answer.datums) store.add(minute, datum, times);
      for (const datum of answer.later?.datums ?? []) store.add(minute + answer.later!.minutes, datum, times);
    }
    if (!scenario.probes) continue;
    // The run's outcome needs every check; a store that does not publish it asks only the checks it keeps.
    const publishes = probes(minute);
    // Without its own order the run asks for no cancel of it: that check is SETUP, not run.
    const unset = scenario.probeSetupFails === true && minute >= span.start;
    const checks = [...probeRun, ...(minute % 5 === 0 ? [{ kind: 'authorize' } as const] : [])]
      .filter((request) => !(unset && request.kind === 'call' && request.run === 'cancel-pending'))
      .filter((request) => publishes || played(request, deploying))
      .map((request) => ({ request, ...probeCheck(() => play(request, deploying)) }));
    // A probe's list is bounded: it never runs long, so all it makes is dated now.
    for (const { request, tries } of checks)
      if (played(request, deploying))
        for (const answer of tries) for (const datum of [...answer.datums, ...(answer.later?.datums ?? [])]) store.add(minute, datum);
    if (!publishes) continue;
    const failed = checks.some(({ outcome }) => outcome === 'fail');
    const busy = checks.filter(({ outcome }) => outcome === 'busy').length;
    store.add(minute, { namespace: 'CloudWatchSynthetics', name: 'SuccessPercent', dimensions: canary, value: failed ? 0 : 100 });
    store.add(minute, { namespace: probeMetricsNamespace, name: metricNames.probeBusy, dimensions: service, value: busy });
    store.add(minute, { namespace: probeMetricsNamespace, name: metricNames.probeSetupFailed, dimensions: service, value: unset ? 1 : 0 });
  }
};

/** Whether a request's answer depends on the routing's seed: it invokes the function a deploy shifts, while it shifts. */
const seeded = (scenario: Scenario) => (request: Request, deploying: boolean) => deploying && invokedBy(request) === scenario.deploy?.fn;

/**
 * What no seed of the routing changes: a scenario's warm-up whole (`warmUp` minutes of its traffic
 * before, `before` if it has one), then from minute `start` its requests (the synthetic client's
 * too) to the functions it does not deploy, and the synthetic client's runs' outcomes unless it
 * deploys (a run may meet the new version).
 */
export const playBase = (stage: Stage, scenario: Scenario, span: Span): MetricStore => {
  const store = new MetricStore();
  const play = player(stage, scenario, () => {
    throw new Error('the base of a scenario draws no route');
  });
  const depends = seeded(scenario);
  playMinutes(
    stage,
    scenario,
    span,
    { store, play, from: span.start - span.warmUp, to: span.start + scenario.minutes },
    (request, deploying) => !depends(request, deploying),
    (minute) => minute < span.start || scenario.deploy === undefined,
  );
  return store;
};

/**
 * What one `seed` of the routing adds to a scenario's `base` (./playBase): while it deploys, the
 * requests to the deployed function (the synthetic client's too) and the runs' outcomes.
 */
export const playSeed = (stage: Stage, scenario: Scenario, span: Span, base: MetricStore, seed: number): MetricStore => {
  const store = new MetricStore(base);
  if (scenario.deploy === undefined) return store;
  const play = player(stage, scenario, seededRandom(seed));
  playMinutes(stage, scenario, span, { store, play, from: span.start, to: span.start + scenario.minutes }, seeded(scenario), () => true);
  return store;
};

/** A whole scenario under one `seed` of the routing, in one store: what ./playBase and ./playSeed hold together. */
export const playScenario = (stage: Stage, scenario: Scenario, span: Span & { readonly seed: number }): MetricStore => {
  const store = new MetricStore();
  const play = player(stage, scenario, seededRandom(span.seed));
  playMinutes(
    stage,
    scenario,
    span,
    { store, play, from: span.start - span.warmUp, to: span.start + scenario.minutes },
    () => true,
    () => true,
  );
  return store;
};
