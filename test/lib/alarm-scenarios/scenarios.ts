/**
 * The named scenarios the stage's alarms are evaluated under (test/shipped/alarm-scenarios.test.ts),
 * each a minute-by-minute traffic of production on a 5,000-order table, and what its alarms must
 * do: its traffic (./traffic.ts) and, for a release, the function it deploys and how that is broken.
 */
import type { FunctionName } from '../../../infra/registry.ts';
import type { FaultName } from './faults.ts';
import { busyDay, call, listHeavyDay, quietHour, type Request, type Traffic } from './traffic.ts';

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
  /** From the start, the synthetic client cannot write its own probe order (its IAM, DynamoDB throttling it): that check is not set up. */
  readonly probeSetupFails?: true;
  /**
   * Alarms that must reach ALARM within the scenario (a deploy's: guards of its function, before the
   * watch ends), under every reading; in a release, in 95 % of the routing's seeds or more.
   */
  readonly mustFire: readonly string[];
  /** Alarms that may go off too (a broken release may well set more than its guard off). */
  readonly mayFire?: readonly string[];
  /**
   * Guards this release's fault should set off on traffic too thin to promise it in 95 % of the
   * routing's seeds (so few answers reach the new version in the bake that two failing minutes may
   * not come): each must in 80 % or more, and the table says how often.
   */
  readonly thin?: readonly string[];
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

/** Each fault on AWS's side the stage alarms on, as one request (Lambda's or DynamoDB's). */
const awsFaults: readonly Request[] = [
  { kind: 'authorizerFails' },
  { kind: 'crash', fn: 'cancelOrder' },
  { kind: 'shed', fn: 'cancelOrder' },
  ...(['OrdersTable', 'ApiKeysTable', 'ListLeasesTable'] as const).flatMap((table) =>
    (['ThrottledRequests', 'SystemErrors'] as const).map((metric) => ({
      kind: 'dynamoDb' as const,
      metric,
      table,
      operation: { OrdersTable: 'UpdateItem', ApiKeysTable: 'GetItem', ListLeasesTable: 'PutItem' }[table],
    })),
  ),
  { kind: 'dynamoDb', metric: 'WriteThrottleEvents', table: 'OrdersTable' },
];

/**
 * Faults on AWS's side: one of each (or one burst within a minute) moves nothing; the same fault
 * lasting or coming back sets its alarm off. The authorizer's throttle comes apart from its failed
 * lookups: both are AUTHORIZER_FAILURE to API Gateway, counted by one alarm.
 */
const faultScenarios: Scenario[] = [
  {
    id: 'transient-faults',
    title:
      "One transient fault of each kind on a busy day, half an hour apart: an authorizer's key lookup failing, then three failing in one minute, a cancel's sandbox crashing, Lambda throttling a cancel, then an authorizer, DynamoDB throttling and failing one request on each table, one throttled write to the orders table",
    minutes: 120,
    before: busyDay,
    traffic: [
      ...busyDay,
      ...awsFaults.map((request) => ({ request, at: [5] })),
      { request: { kind: 'authorizerFails' }, count: 3, at: [35] },
      { request: { kind: 'shed', fn: 'authorizer' }, at: [65] },
    ],
    probes: true,
    mustFire: [],
  },
  {
    id: 'lasting-faults',
    title: 'The same faults on a busy day, each in three separate minutes within ten (a fault that lasts or comes back)',
    minutes: 30,
    before: busyDay,
    traffic: [...busyDay, ...[...awsFaults, { kind: 'shed', fn: 'authorizer' } as const].map((request) => ({ request, at: [5, 8, 11] }))],
    probes: true,
    // Four 5xx a minute in two minutes of five are 2 % of a busy day's requests: the stage fails for real.
    mayFire: ['Api5xxRate', 'AvailabilitySlowBurn'],
    mustFire: [
      'AuthorizerErrors',
      'AuthorizerFailures',
      'AuthorizerThrottles',
      'CancelOrderErrors',
      'CancelOrderThrottles',
      ...['OrdersTable', 'ApiKeysTable', 'ListLeasesTable'].flatMap((table) => [`${table}Throttles`, `${table}SystemErrors`]),
      'OrdersTableWriteThrottles',
    ],
  },
  {
    id: 'canary-cannot-set-up',
    title: "The synthetic client cannot write its probe order for an hour (its role's IAM), on a busy day",
    minutes: 60,
    traffic: busyDay,
    probes: true,
    probeSetupFails: true,
    // Its own alarm, to a person; CanaryFailed, which guards every deploy, stays quiet.
    mustFire: ['CanarySetupFailed'],
  },
];

/** Broken releases at 10 %, for the `watchMinutes` CodeDeploy watches them: one deliberate fault each. */
const brokenReleases = (watchMinutes: number): Scenario[] => {
  const listFails = {
    minutes: watchMinutes,
    deploy: { fn: 'listOrders', fault: 'listFails' },
    probes: true,
    // Its 500s spend the availability budget: the page and the burn alarms may well say so.
    mayFire: ['CanaryFailed', 'Api5xxRate', 'AvailabilityFastBurn', 'AvailabilityMediumBurn', 'AvailabilitySlowBurn'],
  } as const;
  return [
    {
      ...listFails,
      id: 'release-list-fails',
      title: "A new list version at 10 % answering every list 500, on a busy day (4 lists a minute, the probes' included)",
      traffic: busyDay,
      mustFire: [],
      thin: ['ListOrdersErrors'],
    },
    {
      ...listFails,
      id: 'release-list-fails-list-heavy',
      title: 'The same release on a list-heavy day',
      traffic: listHeavyDay,
      mustFire: ['ListOrdersErrors'],
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
};

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
    id: 'release-authorizer-fails',
    title: 'A new authorizer version at 10 % whose key lookups all fail (its DynamoDB endpoint points nowhere)',
    minutes: watchMinutes,
    traffic: busyDay,
    deploy: { fn: 'authorizer', fault: 'authorizerUnreachable' },
    probes: true,
    mustFire: ['AuthorizerErrors'],
    // The stage-wide page counts the same failures; the 500s spend the availability budget.
    mayFire: ['AuthorizerFailures', 'CanaryFailed', 'Api5xxRate', 'AvailabilityFastBurn', 'AvailabilityMediumBurn', 'AvailabilitySlowBurn'],
  },
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
    id: 'release-authorizer-blip',
    title: 'A good new authorizer version at 10 % whose key lookups fail three times in one minute (one DynamoDB blip)',
    minutes: watchMinutes,
    traffic: [...busyDay, { request: { kind: 'authorizerFails', version: 'new' }, count: 3, at: [4] }],
    deploy: { fn: 'authorizer' },
    probes: true,
    mustFire: [],
  },
  {
    id: 'release-during-flood',
    title: 'A good new authorizer version at 10 % during a bad-key flood (20 a minute) that begins with the deploy',
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
  ...faultScenarios,
  ...brokenReleases(watchMinutes),
  ...busyReleases(watchMinutes),
  ...authorizerReleases(watchMinutes),
  ...goodReleases(watchMinutes),
];

/**
 * What a client can do that moves each alarm (docs/deploying.md's table says it beside each): a
 * guard or a page is moved by nothing a client does within the contract, or with a bad key.
 */
export const clientMoves = (alarm: string): string => {
  const rules: [RegExp, string][] = [
    [
      /^(ListOrders|CancelOrder|ListOrdersPaged|Authorizer)Errors$/,
      'nothing: the new version’s failures (lists left or cut by their clients left out)',
    ],
    [/RefusedShare$/, 'nothing: what clients send reaches both versions alike'],
    [/BusyShare$/, 'nothing: load reaches both versions alike'],
    [/P99$/, 'nothing: the new version’s own answer time'],
    [/^Api5xxRate$/, 'nothing: documented refusals are left out'],
    [/^(ListOrders|ListOrdersPaged)Throttles$/, 'lists or pages beyond the reserved concurrency (a ticket)'],
    [/Throttles$|SystemErrors$/, 'nothing within the stage’s throttle'],
    [/ShedShare$/, 'half the route’s requests beyond its reserved concurrency for 15 minutes: an outage'],
    [/NearTimeout$/, 'a client reading a list slowly (a ticket)'],
    [/^AuthorizerFailures$/, 'nothing: a refused key is no failure'],
    [/^AuthFailures$/, 'wrong or revoked keys (a ticket)'],
    [/^Canary(Failed|Stopped|SetupFailed)$/, 'nothing: the probes’ own key and orders'],
    [/^ProbeBusy$/, 'load that keeps the probes busy (a ticket)'],
    [/Burn$/, 'nothing: the service’s own 5xx and answer times'],
  ];
  const rule = rules.find(([pattern]) => pattern.test(alarm));
  if (rule === undefined) throw new Error(`${alarm}: say what a client can do that moves it (clientMoves)`);
  return rule[1];
};
