/**
 * The pre-traffic hook's prober (shared/known-answers.ts): each request of the known-answer suite
 * goes to the new version of the function whose route serves it, as the event API Gateway would
 * send once the authorizer allowed it, and its answer is read as a client would read it. Busy
 * answers are waited out beside the live version (./invocations.ts); the live version is only ever
 * sent a request that changes nothing (a GET, or the suite's `harmless` request).
 */
import { randomBytes } from 'node:crypto';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type Answer, fail } from '../../shared/answers.ts';
import type { CanaryKey } from '../../shared/canary-key.ts';
import { type Authorization, type Prober, type ProbeRequest, type Suite, wrongKeyLike } from '../../shared/known-answers.ts';
import { probeOrderStore, type ProbeOrders } from '../../shared/probe-writes.ts';
import { hookRequestIdPrefix, probeListReadCapBytes } from '../../shared/probes.ts';
import { resourcePath, type Route, routeMatches } from '../../shared/routes.ts';
import { statusIndexQueryable } from '../../shared/status-index.ts';
import { answerOf, busyAnswer, invoke, invokeStreamed, retriedWhileBusy, untilDeadline } from './invocations.ts';

/** What every request of one hook run shares. */
export type HookRun = {
  /** The version each function's deployment publishes, by function name (`authorizer`, each operation). */
  readonly versionArns: Readonly<Record<string, string>>;
  readonly ordersTable: string;
  /** `arn:<partition>:execute-api:<region>:<account>:<api id>/<stage>`: what the authorizer's methodArn starts with. */
  readonly methodArnPrefix: string;
  readonly canary: CanaryKey;
  readonly dynamodb: DynamoDBClient;
  /**
   * The principal the hook's events carry: one per run, so that a list's lease (held per principal)
   * is never one the synthetic client or another deployment's hook holds. The tier stays the canary
   * key's, as the authorizer answered it.
   */
  readonly identity: string;
  /** The principal of the requests sent to the live versions: never the new version's leases. */
  readonly baselineIdentity: string;
  /** The version ARN a function's `live` alias points at, when it is not `newVersionArn` itself (./handler.ts). */
  readonly liveVersionOf: (newVersionArn: string) => Promise<string | undefined>;
  /** The canary tier's list slots per key: the list is read once more than this, under one identity. */
  readonly canaryConcurrentLists: number;
  /** `Date.now()` past which no call starts: the function's timeout less the report's margin. */
  readonly deadline: number;
  readonly probeOrders: ProbeOrders;
  /** Where a line the checks do not own goes (a probe order left behind). */
  readonly note: (line: string) => void;
};

/** One request to a version (`arn`) under a principal (`identity`). */
type Ask<T> = (arn: string, identity: string) => Promise<T>;

/**
 * `ask` of the new version under the run's identity, busy answers waited out; while it is busy,
 * `baseline` (a request that changes nothing) goes to the live version under the baseline identity,
 * and an answer `expected` accepts from it beside a busy new version fails (./invocations.ts).
 */
const askNew = <T>(
  run: HookRun,
  newArn: string,
  ask: Ask<T>,
  busyOf: (value: T) => string | undefined,
  baseline: { ask: Ask<T>; expected: (value: T) => boolean },
) =>
  retriedWhileBusy(
    run,
    () => ask(newArn, run.identity),
    busyOf,
    async () => {
      const live = await run.liveVersionOf(newArn);
      return live === undefined
        ? undefined
        : { version: live.split(':').at(-1)!, attempt: () => baseline.ask(live, run.baselineIdentity), expected: baseline.expected };
    },
  );

const stageOf = (run: HookRun) => run.methodArnPrefix.split('/').at(-1)!;
const apiIdOf = (run: HookRun) => run.methodArnPrefix.split(':').at(-1)!.split('/')[0]!;

/** The path parameters of `path` on `route` (`{orderId}` → its segment). */
const pathParameters = (route: Route, path: string): Record<string, string> | null => {
  const names = [...resourcePath(route).matchAll(/\{([^/}]+)\}/g)].map(([, name]) => name!);
  if (names.length === 0) return null;
  const pattern = new RegExp(`^${resourcePath(route).replace(/\{[^/}]+\}/g, '([^/]+)')}$`);
  const values = pattern.exec(path)?.slice(1) ?? [];
  return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(values[i] ?? '')]));
};

/** A REST API proxy event (payload 1.0), as API Gateway sends it once the authorizer allowed the request. */
const proxyEvent = (run: HookRun, route: Route, request: ProbeRequest, authorizer: Record<string, unknown>) => {
  const stage = stageOf(run);
  const headers = {
    Accept: 'application/json',
    'Accept-Encoding': request.gzip === true ? 'gzip' : 'identity',
    'User-Agent': 'store-orders-pre-traffic-hook',
  };
  const query = request.query === undefined || Object.keys(request.query).length === 0 ? null : { ...request.query };
  return {
    resource: resourcePath(route),
    path: request.path,
    httpMethod: request.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: query,
    multiValueQueryStringParameters:
      query === null ? null : Object.fromEntries(Object.entries(query).map(([name, value]) => [name, [value]])),
    pathParameters: pathParameters(route, request.path),
    stageVariables: null,
    requestContext: {
      resourcePath: resourcePath(route),
      httpMethod: request.method,
      path: `/${stage}${request.path}`,
      stage,
      requestId: `${hookRequestIdPrefix}${randomBytes(8).toString('hex')}`,
      apiId: apiIdOf(run),
      identity: { sourceIp: '127.0.0.1', userAgent: 'store-orders-pre-traffic-hook' },
      authorizer,
    },
    body: null,
    isBase64Encoded: false,
  };
};

type Invoked = Awaited<ReturnType<typeof invoke>>;

/** The new version of the function `name`, from the hook's settings. */
const versionOf = (run: HookRun, name: string) => run.versionArns[name] ?? fail(`the hook's settings name no new version of ${name}`);

/** The prober's authorizer: its answer to a key, and the context its Allow gives every later event. */
const authorizerOf = (run: HookRun, suites: readonly Suite[]) => {
  const harmless = suites.find((suite) => suite.harmless !== undefined)?.harmless?.request;
  const methodArn = `${run.methodArnPrefix}/${harmless?.method ?? 'GET'}${harmless?.path ?? '/v1/store/orders'}`;
  let context: Record<string, unknown> | undefined;
  const authorize = async (key: 'own' | 'wrong'): Promise<Authorization> => {
    const event = {
      type: 'TOKEN',
      authorizationToken: `Bearer ${key === 'own' ? run.canary.key : wrongKeyLike(run.canary.key)}`,
      methodArn,
    };
    const ask: Ask<Invoked> = (arn) => invoke(run, arn, event);
    // The authorizer has no busy answer of its own: only Lambda's throttle is busy (./invocations.ts).
    const expected = ({ functionError }: Invoked) => (key === 'own') === (functionError === undefined);
    const { functionError, payload } = await askNew(run, versionOf(run, 'authorizer'), ask, () => undefined, { ask, expected });
    if (key === 'own' && functionError === undefined) context = (payload as { context?: Record<string, unknown> } | null)?.context ?? {};
    return { via: 'authorizer', error: functionError, payload, usageIdentifierKey: run.canary.usageIdentifierKey };
  };
  /** What the Allow gives the events, under a principal of the run's (asked for first where no check asked yet). */
  const contextFor = async (identity: string) => {
    if (context === undefined) await authorize('own');
    return { ...context, principalId: identity, keyId: identity };
  };
  return { authorize, contextFor };
};

/** The orders table as DescribeTable describes it: its item count, its indexes' status. */
const describeOrders = async (run: HookRun) =>
  (await run.dynamodb.send(new DescribeTableCommand({ TableName: run.ordersTable }), { abortSignal: untilDeadline(run) })).Table;

/** The hook's prober over `suites`: each request to the new version of the function that serves it. */
export const hookProber = (run: HookRun, suites: readonly Suite[]): Prober => {
  const authorizer = authorizerOf(run, suites);
  const ask = async (request: ProbeRequest, options: { handBack?: (answer: Answer) => boolean } = {}) => {
    const suite = suites.find(({ route }) => route !== undefined && routeMatches(route, request.method, request.path));
    if (suite?.route === undefined) return fail(`no operation of this release serves ${request.method} ${request.path}`);
    const route = suite.route;
    const send =
      (sent: ProbeRequest): Ask<Answer> =>
      async (arn, identity) => {
        const event = proxyEvent(run, route, sent, await authorizer.contextFor(identity));
        return route.streaming ? invokeStreamed(run, arn, event, probeListReadCapBytes) : answerOf(await invoke(run, arn, event));
      };
    // The live version is sent what changes nothing: the same GET, or the operation's harmless request.
    const baseline = request.method === 'GET' ? { request, status: 200 } : suite.harmless;
    const busyOf = (answer: Answer) => (options.handBack?.(answer) === true ? undefined : busyAnswer(answer));
    return askNew(run, versionOf(run, route.operation), send(request), busyOf, {
      ask: baseline === undefined ? async () => fail('no request changes nothing here') : send(baseline.request),
      expected: (answer) => answer.status === baseline?.status,
    });
  };
  return {
    ask,
    authorize: authorizer.authorize,
    orders: probeOrderStore(run.probeOrders, run.note),
    list: { reads: run.canaryConcurrentLists + 1, bounded: true },
    statusIndex: async () => (statusIndexQueryable(await describeOrders(run)) ? 'ready' : 'not ready'),
    itemCount: async () => (await describeOrders(run))?.ItemCount ?? 0,
  };
};
