/**
 * The pre-traffic hook's checks of the new versions (functions/pre-traffic-hook/handler.ts): the events API
 * Gateway would send, and one named check per answer the API promises, each judged as the smoke
 * check judges a client's answer (./answers.ts). Each check returns its PASS line's text, or throws
 * its FAIL reason (or ServiceBusy: the service kept refusing until the run's deadline).
 */
import { randomBytes } from 'node:crypto';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { answerOf, busyAnswer, invoke, invokeStreamed, retriedWhileBusy, untilDeadline } from './invocations.ts';
import { type Answer, expectError, fail, listedOrders } from '../../shared/answers.ts';
import type { CanaryKey } from '../../shared/canary-key.ts';
import { checkProbeCancel, type ProbeOrders, putBackPending } from '../../shared/probe-writes.ts';
import { hookRequestIdPrefix, idThatCannotExist, probeListReadCapBytes, probeOrdersCountedAtMost } from '../../shared/probes.ts';
import { basePath } from '../../shared/routes.ts';
import { type AskPage, v2PagesAnswer, v2StatusPageAnswers } from './v2-page-checks.ts';

/** The new version of each function, and where the checks send their events (the hook's settings). */
export type HookTargets = {
  readonly AUTHORIZER_VERSION_ARN: string;
  readonly LIST_ORDERS_VERSION_ARN: string;
  readonly CANCEL_ORDER_VERSION_ARN: string;
  readonly LIST_ORDERS_PAGED_VERSION_ARN: string;
  readonly ORDERS_TABLE: string;
  /** `arn:<partition>:execute-api:<region>:<account>:<api id>/<stage>`: what the authorizer's methodArn starts with. */
  readonly METHOD_ARN_PREFIX: string;
};

/** What every check of one hook run shares: the targets, the deployment's own identity, its probe order, the checks' deadline. */
export type HookRun = {
  readonly targets: HookTargets;
  readonly canary: CanaryKey;
  readonly dynamodb: DynamoDBClient;
  /**
   * The principal the hook's list and cancel events carry: one per deployment, so that a list's
   * lease (held per principal) is never one the synthetic client or another deployment's hook
   * holds. The tier stays the canary key's, as the authorizer answered it.
   */
  readonly identity: string;
  /** The principal of the same requests sent to the live versions: never the new version's leases. */
  readonly baselineIdentity: string;
  /** The version ARN a function's `live` alias points at, when it is not `newVersionArn` itself (functions/pre-traffic-hook/handler.ts). */
  readonly liveVersionOf: (newVersionArn: string) => Promise<string | undefined>;
  /** The canary tier's list slots per key: the list check lists once more than this, under one identity. */
  readonly canaryConcurrentLists: number;
  /** `Date.now()` past which no check starts a call: the function's timeout less the report's margin. */
  readonly deadline: number;
  /** The hook's own orders, and the pending one made for this run (or why it could not be made). */
  readonly probeOrders: ProbeOrders;
  readonly probeOrder: string | Error;
};

/** One named check of the new versions; it returns its PASS line's text or throws its FAIL reason. */
export type Check = { readonly name: string; readonly run: () => Promise<string> };

/** One request to a version (`arn`) under a principal (`identity`). */
type Ask<T> = (arn: string, identity: string) => Promise<T>;

/**
 * `ask` of the new version `newArn` under the run's identity, busy answers waited out; while it is
 * busy, the same request goes to the live version under the baseline identity, and an answer
 * `expected` accepts from it while the new version stays busy fails the check (./invocations.ts).
 */
const askNew = <T>(run: HookRun, newArn: string, ask: Ask<T>, busyOf: (value: T) => string | undefined, expected: (value: T) => boolean) =>
  retriedWhileBusy(
    run,
    () => ask(newArn, run.identity),
    busyOf,
    async () => {
      const live = await run.liveVersionOf(newArn);
      return live === undefined
        ? undefined
        : { version: live.split(':').at(-1)!, attempt: () => ask(live, run.baselineIdentity), expected };
    },
  );

const stageOf = (targets: HookTargets) => targets.METHOD_ARN_PREFIX.split('/').at(-1)!;
const apiIdOf = (targets: HookTargets) => targets.METHOD_ARN_PREFIX.split(':').at(-1)!.split('/')[0]!;

/** The TOKEN authorizer's event for a request to the list. */
const tokenEvent = (targets: HookTargets, key: string) => ({
  type: 'TOKEN',
  authorizationToken: `Bearer ${key}`,
  methodArn: `${targets.METHOD_ARN_PREFIX}/GET${basePath}/store/orders`,
});

/** A REST API proxy event (payload 1.0), as API Gateway sends it once the authorizer allowed the request. */
const proxyEvent = (targets: HookTargets, method: 'GET' | 'DELETE', path: string, authorizer: Record<string, unknown>) => {
  const stage = stageOf(targets);
  const requestId = `${hookRequestIdPrefix}${randomBytes(8).toString('hex')}`;
  const resource = path.startsWith('/store/orders/') ? `${basePath}/store/orders/{orderId}` : `${basePath}${path}`;
  const headers = { Accept: 'application/json', 'Accept-Encoding': 'identity', 'User-Agent': 'store-orders-pre-traffic-hook' };
  return {
    resource,
    path: `${basePath}${path}`,
    httpMethod: method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: resource.endsWith('{orderId}') ? { orderId: path.split('/').at(-1) } : null,
    stageVariables: null,
    requestContext: {
      resourcePath: resource,
      httpMethod: method,
      path: `/${stage}${basePath}${path}`,
      stage,
      requestId,
      apiId: apiIdOf(targets),
      identity: { sourceIp: '127.0.0.1', userAgent: 'store-orders-pre-traffic-hook' },
      authorizer,
    },
    body: null,
    isBase64Encoded: false,
  };
};

/** The orders table as DescribeTable describes it: its item count, its indexes' status. */
const describeOrders = (run: HookRun) => async () =>
  (await run.dynamodb.send(new DescribeTableCommand({ TableName: run.targets.ORDERS_TABLE }), { abortSignal: untilDeadline(run) })).Table;

/**
 * A key no one holds, made of fresh random characters: only the stage's key prefix (`so_live_`,
 * public, in every key of the stage) is taken from the canary key, so that the authorizer reaches
 * its lookup; no secret character of the canary key travels in a request meant to fail.
 */
export const wrongKeyLike = (key: string): string => {
  const prefix = /^[a-z]+_[a-z]+_/.exec(key)?.[0] ?? '';
  const length = Math.max(key.length, prefix.length + 32);
  return `${prefix}${randomBytes(length)
    .toString('hex')
    .slice(0, length - prefix.length)}`;
};

/** What the authorizer's Allow gives the list and cancel events: its context, under a principal of the run's. */
type AuthorizerContext = { value: Record<string, unknown> };
const authorizerFor = (context: AuthorizerContext, identity: string) => ({ ...context.value, principalId: identity, keyId: identity });

type Invoked = Awaited<ReturnType<typeof invoke>>;
/** The authorizer has no busy answer of its own: only Lambda's throttle (./invocations.ts) is busy. */
const notBusy = () => undefined;

/** The new authorizer version's answer to `event` (it is never busy), `expected` as the live version's would be judged. */
const askAuthorizer = (run: HookRun, event: ReturnType<typeof tokenEvent>, expected: (answer: Invoked) => boolean) =>
  askNew(run, run.targets.AUTHORIZER_VERSION_ARN, (arn) => invoke(run, arn, event), notBusy, expected);

const authorizerAllows = (run: HookRun, context: AuthorizerContext): Check => ({
  name: 'authorizer allows the canary key',
  run: async () => {
    const event = tokenEvent(run.targets, run.canary.key);
    const allowed = ({ functionError, payload }: Invoked) =>
      functionError === undefined &&
      (payload as { policyDocument?: { Statement?: { Effect?: string }[] } } | null)?.policyDocument?.Statement?.[0]?.Effect === 'Allow';
    const { functionError, payload } = await askAuthorizer(run, event, allowed);
    if (functionError !== undefined) fail(`refused it (${functionError}): ${JSON.stringify(payload).slice(0, 200)}`);
    const answer = payload as { principalId?: string; policyDocument?: { Statement?: { Effect?: string }[] } } & Record<string, unknown>;
    if (answer.policyDocument?.Statement?.[0]?.Effect !== 'Allow') fail(`no Allow policy: ${JSON.stringify(answer).slice(0, 200)}`);
    if (answer.usageIdentifierKey !== run.canary.usageIdentifierKey) fail("the answer does not carry the key's usage identifier");
    context.value = answer.context as Record<string, unknown>;
    return `Allow for ${answer.principalId}, with its usage identifier`;
  },
});

const authorizerRefuses = (run: HookRun): Check => ({
  name: 'authorizer refuses a wrong key',
  run: async () => {
    const event = tokenEvent(run.targets, wrongKeyLike(run.canary.key));
    const refused = ({ functionError, payload }: Invoked) => functionError !== undefined && payload?.errorMessage === 'Unauthorized';
    const { functionError, payload } = await askAuthorizer(run, event, refused);
    // Exactly this message is what API Gateway turns into 401; anything else becomes a 500.
    if (functionError === undefined || payload?.errorMessage !== 'Unauthorized')
      fail(`expected the error "Unauthorized", got ${functionError ?? 'an answer'}: ${JSON.stringify(payload).slice(0, 200)}`);
    return 'Unauthorized';
  },
});

/** The orders of one bounded list answer: valid, each id once, and not past the probe's bound. */
const boundedListOrders = (answer: Answer) => {
  if (answer.cut) fail(`the list went on past ${probeListReadCapBytes} bytes: this version does not end a probe's list at its bound`);
  const orders = listedOrders(answer);
  const ids = new Set<unknown>();
  for (const order of orders) {
    if (ids.has(order.id)) fail(`order ${String(order.id)} is listed twice in ${orders.length} orders: the Scan repeats a page`);
    ids.add(order.id);
  }
  return orders;
};

/**
 * The list, read to its end: the canary key's tier is answered a bounded list (shared/probes.ts), so
 * the hook never leaves it. Valid orders, each id once, not [] while the table's item count says it
 * holds orders (less the probe orders it may count), and no answer past the bound. Asked one time
 * more than a canary key's list slots, one after another under one identity: each list gives its
 * lease back before it ends, so a version that keeps its leases is refused the last time, beside a
 * live version that answers.
 */
const listAnswers = (run: HookRun, context: AuthorizerContext): Check => ({
  name: 'list',
  run: async () => {
    const ask: Ask<Answer> = (arn, identity) =>
      invokeStreamed(run, arn, proxyEvent(run.targets, 'GET', '/store/orders', authorizerFor(context, identity)), probeListReadCapBytes);
    let answer: Answer | undefined;
    let orders: Record<string, unknown>[] = [];
    for (let time = 1; time <= run.canaryConcurrentLists + 1; time++) {
      answer = await askNew(run, run.targets.LIST_ORDERS_VERSION_ARN, ask, busyAnswer, (value) => value.status === 200);
      orders = boundedListOrders(answer);
    }
    const itemCount = (await describeOrders(run)())?.ItemCount ?? 0;
    if (orders.length === 0 && itemCount > probeOrdersCountedAtMost) fail(`answered [] while the table's item count is ${itemCount}`);
    return `200, ${orders.length} valid orders in ${Buffer.byteLength(answer!.body)} bytes (table item count ${itemCount})`;
  },
});

/** A v2 page from the new version (its handler reads only the query parameters), busy answers waited out beside the live version. */
const askPage =
  (run: HookRun, context: AuthorizerContext): AskPage =>
  async (query, busyOf = busyAnswer) => {
    const ask: Ask<Answer> = async (arn, identity) => {
      const event = { ...proxyEvent(run.targets, 'GET', '/store/orders', authorizerFor(context, identity)), queryStringParameters: query };
      return answerOf(await invoke(run, arn, event));
    };
    return askNew(run, run.targets.LIST_ORDERS_PAGED_VERSION_ARN, ask, busyOf, (value) => value.status === 200);
  };

/** The new cancel's answer for `orderId`, busy answers waited out beside the live version (`expected` of its answer). */
const cancelAnswer = (run: HookRun, context: AuthorizerContext, orderId: string, expected: number, afterLive?: () => Promise<void>) => {
  const ask: Ask<Answer> = async (arn, identity) => {
    const answer = answerOf(
      await invoke(run, arn, proxyEvent(run.targets, 'DELETE', `/store/orders/${orderId}`, authorizerFor(context, identity))),
    );
    if (arn !== run.targets.CANCEL_ORDER_VERSION_ARN) await afterLive?.();
    return answer;
  };
  return askNew(run, run.targets.CANCEL_ORDER_VERSION_ARN, ask, busyAnswer, (value) => value.status === expected);
};

const cancelRefuses = (run: HookRun, context: AuthorizerContext, name: string, orderId: string, status: number, code: string): Check => ({
  name,
  run: async () => `order ${orderId}: ${expectError(await cancelAnswer(run, context, orderId, status), status, code)}`,
});

/**
 * The hook's own pending order, cancelled through the new version (shared/probe-writes.ts
 * checkProbeCancel). A live version asked beside a busy new one cancels it too: it is put back
 * pending at once, so that what the new version answers is still judged on a pending order.
 */
const cancelsPending = (run: HookRun, context: AuthorizerContext): Check => ({
  name: 'cancel of a pending order',
  run: async () => {
    if (run.probeOrder instanceof Error) return fail(`no probe order to cancel: ${run.probeOrder.message}`);
    const id = run.probeOrder;
    return checkProbeCancel(run.probeOrders, id, async () => {
      const answer = await cancelAnswer(run, context, id, 204, () => putBackPending(run.probeOrders, id));
      if (answer.status !== 204) fail(`expected 204, got ${answer.status}: ${answer.body.slice(0, 200)}`);
      return answer.headers.get('x-request-id') ?? fail('no X-Request-Id header');
    });
  },
});

/**
 * The checks, in order (the authorizer's Allow gives the others its context). Each is a small
 * named check: one more function (another route) is one more entry here.
 */
export const hookChecks = (run: HookRun): Check[] => {
  const context: AuthorizerContext = { value: {} };
  return [
    authorizerAllows(run, context),
    authorizerRefuses(run),
    listAnswers(run, context),
    v2PagesAnswer(askPage(run, context), typeof run.probeOrder === 'string'),
    v2StatusPageAnswers(askPage(run, context), describeOrders(run)),
    cancelRefuses(run, context, 'cancel of an absent order', idThatCannotExist, 404, 'order_not_found'),
    cancelRefuses(run, context, 'cancel of a malformed id', 'pre-traffic-check', 400, 'invalid_order_id'),
    cancelsPending(run, context),
  ];
};
