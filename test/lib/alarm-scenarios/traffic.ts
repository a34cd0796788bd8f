/**
 * What reaches the stage in the alarm scenarios (./scenarios.ts): each request kind (a client's, the
 * synthetic client's, or a fault on AWS's side), the runs of the shipped bundles that answer them
 * (./catalog.ts makes them), and a minute of traffic on a busy day, a list-heavy day, a quiet hour.
 */
import type { FunctionName } from '../../../infra/registry.ts';

/** A table of the stack, by its id (the first part of its alarms' names). */
export type TableId = 'OrdersTable' | 'ApiKeysTable' | 'ListLeasesTable';

/**
 * A request of a client, or of the synthetic client (`probe`), as it reaches the stage, or a fault
 * on AWS's side. One that invokes a function is answered by the version CodeDeploy's weight draws,
 * or by the one it names (`version`).
 */
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
  /**
   * Lambda throttled the invocation: a list or page refused because its function runs all it
   * reserves (5xx with Retry-After), or a cancel or an authorizer (which reserve nothing) because
   * the account's concurrency is used up (500; the authorizer's AUTHORIZER_FAILURE).
   */
  | { readonly kind: 'shed'; readonly fn: FunctionName }
  /** The authorizer's key lookup failed (DynamoDB unreachable, or past its deadline): it throws, API Gateway answers 500 AUTHORIZER_FAILURE. */
  | { readonly kind: 'authorizerFails'; readonly version?: 'new' }
  /** The cancel's sandbox crashed mid-request: Lambda counts an error, the function printed nothing, API Gateway answers 502. */
  | { readonly kind: 'crash'; readonly fn: 'cancelOrder'; readonly version?: 'new' }
  /**
   * DynamoDB throttled one of this service's requests to `table` or answered it with a server error
   * (per `operation`), or throttled a write to it from any writer (`WriteThrottleEvents`): the SDK's
   * retry succeeded, the client saw nothing.
   */
  | {
      readonly kind: 'dynamoDb';
      readonly metric: 'ThrottledRequests' | 'SystemErrors' | 'WriteThrottleEvents';
      readonly table: TableId;
      readonly operation?: string;
    }
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
  // The shipped authorizer with its DynamoDB endpoint unreachable: its key lookup fails.
  'authorize-unreachable': 'authorizer',
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
  'authorize-unreachable': { answerMs: 15, totalMs: 15 },
};

/** The function a request invokes, whose version CodeDeploy's weight decides (none: API Gateway or DynamoDB answers alone). */
export const invokedBy = (request: Request): FunctionName | undefined => {
  switch (request.kind) {
    case 'call':
      return runs[request.run];
    case 'authorize':
    case 'refusedKey':
    case 'authorizerFails':
      return 'authorizer';
    case 'crash':
      return request.fn;
    default:
      return undefined;
  }
};

/** `count` of a request each minute, or at each of the minutes `at` after the start only; or one every `every` minutes. */
export type Traffic = readonly {
  readonly request: Request;
  readonly count?: number;
  readonly every?: number;
  readonly at?: readonly number[];
}[];

export const call = (run: RunName, count: number) => ({ request: { kind: 'call', run } as const, count });

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

/** The invocations of `fn` a minute of `traffic` makes, the synthetic client's run included (its Allow every 5 minutes). */
export const invocationsPerMinute = (traffic: Traffic, fn: FunctionName): number =>
  traffic
    .filter(({ request, at }) => at === undefined && invokedBy(request) === fn)
    .reduce((sum, { count = 1, every }) => sum + (every === undefined ? count : 1 / every), 0) +
  probeRun.filter((request) => invokedBy(request) === fn).length +
  (fn === 'authorizer' ? 1 / 5 : 0);
