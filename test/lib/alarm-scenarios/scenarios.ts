/**
 * The named scenarios the stage's alarms are evaluated under (test/shipped/alarm-scenarios.test.ts),
 * each a minute-by-minute traffic of production on a 5,000-order table, and what its alarms must
 * do. A request kind names a run of a shipped bundle (./catalog.ts) or an answer API Gateway gives
 * itself; each minute's requests are listed, those that come every few minutes with `every`.
 */
import type { FunctionName } from '../../../infra/registry.ts';
import type { FaultName } from './faults.ts';

/** A request of a client, or of the synthetic client (`probe`), as it reaches the stage. */
export type Request =
  /** A request with a valid key whose Allow API Gateway has cached, answered by a run of its route's function. */
  | { readonly kind: 'call'; readonly run: RunName }
  /** A valid key's Allow expired: the authorizer runs (then the request goes on, counted among the calls). */
  | { readonly kind: 'authorize' }
  /** A key the authorizer refuses (unknown or revoked): 401 after the authorizer ran. */
  | { readonly kind: 'refusedKey' }
  /** No key, or a malformed header: 401 from API Gateway before the authorizer. */
  | { readonly kind: 'malformedKey' }
  /** Over a key's or the stage's limit: 429 from API Gateway. */
  | { readonly kind: 'throttled'; readonly fn: 'listOrders' | 'cancelOrder' | 'listOrdersPaged' }
  /** A list or page refused because its function runs all it reserves: a Lambda throttle, 5xx with Retry-After. */
  | { readonly kind: 'shed'; readonly fn: 'listOrders' | 'listOrdersPaged' }
  /** A path no route serves: 404 from API Gateway. */
  | { readonly kind: 'unknownRoute' };

/** The runs of the shipped bundles a scenario's calls are answered by (./catalog.ts makes them). */
export const runs = {
  'list-whole': 'listOrders',
  'list-slots-full': 'listOrders',
  'list-left': 'listOrders',
  'list-probe': 'listOrders',
  'cancel-pending': 'cancelOrder',
  'cancel-again': 'cancelOrder',
  'cancel-shipped': 'cancelOrder',
  'cancel-missing': 'cancelOrder',
  'page-first': 'listOrdersPaged',
  'page-next': 'listOrdersPaged',
  'page-not-ready': 'listOrdersPaged',
  'authorize-valid': 'authorizer',
  'authorize-refused': 'authorizer',
} as const satisfies Record<string, FunctionName>;
export type RunName = keyof typeof runs;

/** Each run's times in this model (not measured here: emissions.ts, Times). */
export const runTimes: Record<RunName, { answerMs: number; totalMs: number }> = {
  'list-whole': { answerMs: 300, totalMs: 2_500 },
  'list-slots-full': { answerMs: 30, totalMs: 30 },
  'list-left': { answerMs: 300, totalMs: 600 },
  'list-probe': { answerMs: 300, totalMs: 600 },
  'cancel-pending': { answerMs: 40, totalMs: 40 },
  'cancel-again': { answerMs: 40, totalMs: 40 },
  'cancel-shipped': { answerMs: 40, totalMs: 40 },
  'cancel-missing': { answerMs: 40, totalMs: 40 },
  'page-first': { answerMs: 150, totalMs: 150 },
  'page-next': { answerMs: 150, totalMs: 150 },
  'page-not-ready': { answerMs: 20, totalMs: 20 },
  'authorize-valid': { answerMs: 15, totalMs: 15 },
  'authorize-refused': { answerMs: 15, totalMs: 15 },
};

/** `count` of a request each minute, or one every `every` minutes. */
export type Traffic = readonly { readonly request: Request; readonly count?: number; readonly every?: number }[];

const call = (run: RunName, count: number) => ({ request: { kind: 'call', run } as const, count });

/**
 * Production on a busy day: 30 cancels a minute (most of pending orders, some repeated, some of
 * shipped or unknown orders), 2 v1 lists (one read whole, one left after its first part), 20 v2
 * pages (readers of 4 pages each), 100 keys in use (an Allow per key every 5 minutes), a few
 * requests over their limits, a wrong key and a malformed header now and then.
 */
export const busyDay: Traffic = [
  call('cancel-pending', 24),
  call('cancel-again', 3),
  call('cancel-shipped', 2),
  call('cancel-missing', 1),
  call('list-whole', 1),
  call('list-left', 1),
  call('page-first', 5),
  call('page-next', 15),
  { request: { kind: 'authorize' }, count: 20 },
  { request: { kind: 'refusedKey' }, count: 1 },
  { request: { kind: 'malformedKey' }, every: 2 },
  { request: { kind: 'throttled', fn: 'cancelOrder' }, count: 2 },
];

/**
 * A list-heavy day: the busy day and 20 more lists a minute read whole, and 10 lists a minute
 * refused because their key already runs its tier's lists (429 with Retry-After): enough lists for
 * a version at 10 % to give the 10 answers in 5 minutes its share guards judge.
 */
export const listHeavyDay: Traffic = [...busyDay, call('list-whole', 20), call('list-slots-full', 10)];

/** A quiet hour: a few cancels and pages, a list now and then, 10 keys in use. */
export const quietHour: Traffic = [
  call('cancel-pending', 2),
  call('cancel-missing', 1),
  call('page-first', 1),
  call('page-next', 2),
  { request: { kind: 'call', run: 'list-left' }, every: 5 },
  { request: { kind: 'authorize' }, count: 2 },
];

/**
 * The synthetic client's run, once a minute (functions/canary/handler.ts): two lists (its `canary` tier's,
 * which end after 256 KB, read whole), a page and the next one, the cancel of an id that cannot
 * exist and of a pending order of its own, a wrong key, an unknown route; its own key's Allow
 * every 5 minutes. It knows every right answer:
 * a run fails when one answer differs from the good build's, a busy answer (429, or 503 with
 * Retry-After) is waited out, not a failure.
 */
export const probeRun: readonly Request[] = [
  { kind: 'call', run: 'list-probe' },
  { kind: 'call', run: 'list-probe' },
  { kind: 'call', run: 'page-first' },
  { kind: 'call', run: 'page-next' },
  { kind: 'call', run: 'cancel-missing' },
  { kind: 'call', run: 'cancel-pending' },
  { kind: 'refusedKey' },
  { kind: 'unknownRoute' },
];

/** A deploy: `fn`'s new version, built with `fault` (or as it is), takes 10 % of its invocations from the scenario's start. */
export type Deploy = { readonly fn: FunctionName; readonly fault?: FaultName };

export type Scenario = {
  readonly id: string;
  readonly title: string;
  /** Minutes simulated after the start (a deploy's: until CodeDeploy stops watching). */
  readonly minutes: number;
  readonly traffic: Traffic;
  /** The traffic before the scenario starts (its warm-up), when not the same. */
  readonly before?: Traffic;
  readonly deploy?: Deploy;
  /**
   * Whether Lambda counts each list its client left in Errors. The function resolves such an
   * invocation; whether Lambda still counts it, AWS does not say, so both cases are played.
   */
  readonly leftListsCountedAsErrors?: boolean;
  /** Whether the synthetic client runs (every scenario: yes). */
  readonly probes: boolean;
  /** Alarms that must reach ALARM within the scenario (a deploy's: guards of its function, before the watch ends). */
  readonly mustFire: readonly string[];
  /** Alarms that may go off too (a broken release may well set more than its guard off). */
  readonly mayFire?: readonly string[];
  /**
   * A release whose fault shows only after CodeDeploy stopped watching (`minutes` reach past the
   * watch): its must-fire alarms page on-call, who rolls it back by hand; no guard stops it.
   */
  readonly pastTheWatch?: true;
};

const refusedKeys = (count: number) => ({ request: { kind: 'refusedKey' } as const, count });

/** What clients do, with no deploy under way: healthy and hostile traffic, and documented refusals. */
const clientScenarios: Scenario[] = [
  {
    id: 'healthy',
    title: 'Healthy traffic on a 5,000-order table, clients leaving lists early, the probes running',
    minutes: 120,
    traffic: busyDay,
    probes: true,
    mustFire: [],
  },
  {
    id: 'bad-key-flood',
    title: 'A bad-key flood in a quiet hour: 20 revoked-key and 5 malformed requests a minute',
    minutes: 60,
    before: quietHour,
    traffic: [...quietHour, refusedKeys(20), { request: { kind: 'malformedKey' }, count: 5 }],
    probes: true,
    // A ticket: the key's owner is told; nobody is paged, no guard moves.
    mustFire: ['AuthFailures'],
  },
  {
    id: 'list-slots-full',
    title: 'List slots full for an hour: 5 lists a minute shed at the reserved concurrency',
    minutes: 60,
    before: busyDay,
    traffic: [...busyDay, { request: { kind: 'shed', fn: 'listOrders' }, count: 5 }],
    probes: true,
    // A ticket: the stage wants more slots; the refusals are documented, no failure. More than half
    // the lists shed for a quarter of an hour is an outage all the same: a page (ListOrdersShedShare).
    mustFire: ['ListOrdersThrottles', 'ListOrdersShedShare'],
  },
  {
    id: 'greedy-key',
    title: 'One key asking for lists into its own full slots, 20 a minute for an hour (each answered 429), on a busy day',
    minutes: 60,
    before: busyDay,
    traffic: [...busyDay, call('list-slots-full', 20)],
    probes: true,
    // Most of the route's requests refused, all by the key's own limit: the client's doing, no page.
    mustFire: [],
  },
  {
    id: 'index-backfilling',
    title: 'The status index backfilling for two hours while clients poll ?status= (20 pages a minute answered 503)',
    minutes: 120,
    before: busyDay,
    traffic: [...busyDay, { request: { kind: 'call', run: 'page-not-ready' }, count: 20 }],
    probes: true,
    mustFire: [],
  },
];

/** Broken releases at 10 %, for the `watchMinutes` CodeDeploy watches them: one deliberate fault each. */
const brokenReleases = (watchMinutes: number): Scenario[] => [
  {
    id: 'release-list-fails',
    title: 'A new list version at 10 % answering every list 500',
    minutes: watchMinutes,
    traffic: busyDay,
    deploy: { fn: 'listOrders', fault: 'listFails' },
    probes: true,
    mustFire: ['ListOrdersErrors'],
    // Its 500s spend the availability budget: the burn alarms may well say so.
    mayFire: ['CanaryFailed', 'AvailabilityFastBurn', 'AvailabilityMediumBurn', 'AvailabilitySlowBurn'],
  },
  {
    id: 'release-cancel-409',
    title: 'A new cancel version at 10 % answering 409 for pending orders',
    minutes: watchMinutes,
    traffic: busyDay,
    deploy: { fn: 'cancelOrder', fault: 'cancelPendingConflict' },
    probes: true,
    mustFire: ['CancelOrderRefusedShare'],
    mayFire: ['CanaryFailed'],
  },
  {
    id: 'release-second-page-fails',
    title: 'A new v2 version at 10 % answering every second page 400 invalid_cursor',
    minutes: watchMinutes,
    traffic: busyDay,
    deploy: { fn: 'listOrdersPaged', fault: 'secondPageInvalid' },
    probes: true,
    mustFire: ['ListOrdersPagedRefusedShare'],
    mayFire: ['CanaryFailed'],
  },
];

/** Broken releases at 10 % whose answers are documented refusals, or whose lists never end. */
const busyReleases = (watchMinutes: number): Scenario[] => [
  {
    id: 'release-cancel-unavailable',
    title: 'A new cancel version at 10 % whose DynamoDB client points at a closed port: every cancel answers 503 with Retry-After',
    minutes: watchMinutes,
    traffic: busyDay,
    deploy: { fn: 'cancelOrder', fault: 'cancelUnavailable' },
    probes: true,
    mustFire: ['CancelOrderBusyShare'],
    // Its 503s are not subtracted from the stage's 5xx: the page and the burn alarms may say so too.
    mayFire: ['Api5xxRate', 'AvailabilityFastBurn', 'AvailabilityMediumBurn', 'AvailabilitySlowBurn'],
  },
  {
    id: 'release-list-429',
    title: "A new list version at 10 % on a list-heavy day that finds every key's list slots full: every list answers 429",
    minutes: watchMinutes,
    traffic: listHeavyDay,
    deploy: { fn: 'listOrders', fault: 'listLeaseNeverFree' },
    probes: true,
    mustFire: ['ListOrdersBusyShare'],
  },
  {
    id: 'release-list-runs-too-long',
    title:
      'A new list version at 10 % on a list-heavy day whose Scan repeats its first page: each list read whole is cut at 14 minutes, after the watch',
    minutes: watchMinutes + 15,
    traffic: listHeavyDay,
    deploy: { fn: 'listOrders', fault: 'listRepeatsFirstPage' },
    probes: true,
    mustFire: ['ListOrdersErrors'],
    pastTheWatch: true,
    mayFire: ['ListOrdersNearTimeout'],
  },
];

/** A broken authorizer at 10 %. */
const authorizerReleases = (watchMinutes: number): Scenario[] => [
  {
    id: 'release-authorizer-denies',
    title: 'A new authorizer version at 10 % denying every key',
    minutes: watchMinutes,
    traffic: busyDay,
    deploy: { fn: 'authorizer', fault: 'authorizerDeniesAll' },
    probes: true,
    mustFire: ['AuthorizerRefusedShare'],
    mayFire: ['CanaryFailed'],
  },
];

/** Good releases at 10 %, under what clients may do. */
const goodReleases = (watchMinutes: number): Scenario[] => [
  {
    id: 'release-lists-left',
    title:
      'A good new list version at 10 % whose clients leave lists early, Lambda counting each in Errors (AWS does not say whether it does)',
    minutes: watchMinutes,
    traffic: busyDay,
    deploy: { fn: 'listOrders' },
    leftListsCountedAsErrors: true,
    probes: true,
    mustFire: [],
  },
  {
    id: 'release-lists-busy',
    title:
      'A good new list version at 10 % on a list-heavy day whose clients fill their list slots (10 lists a minute answered 429) and 5 more a minute shed at the reserved concurrency',
    minutes: watchMinutes,
    before: listHeavyDay,
    traffic: [...listHeavyDay, { request: { kind: 'shed', fn: 'listOrders' }, count: 5 }],
    deploy: { fn: 'listOrders' },
    probes: true,
    mustFire: [],
    // A ticket: the stage sheds lists; the stage wants more slots, no release is at fault.
    mayFire: ['ListOrdersThrottles'],
  },
  {
    id: 'release-during-flood',
    title: 'A good new authorizer version at 10 % during a bad-key flood (20 a minute)',
    minutes: watchMinutes,
    before: busyDay,
    traffic: [...busyDay, refusedKeys(20)],
    deploy: { fn: 'authorizer' },
    probes: true,
    mustFire: [],
    mayFire: ['AuthFailures'],
  },
];

/**
 * The scenarios, for production (`watchMinutes`: how long CodeDeploy watches a shift, from the stage's
 * deployment configuration). Every alarm not named stays quiet (never in ALARM) throughout.
 */
export const scenarios = (watchMinutes: number): Scenario[] => [
  ...clientScenarios,
  ...brokenReleases(watchMinutes),
  ...busyReleases(watchMinutes),
  ...authorizerReleases(watchMinutes),
  ...goodReleases(watchMinutes),
];
