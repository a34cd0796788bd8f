/**
 * CodeDeploy's `BeforeAllowTraffic` hook of every function of a stage (infra/cdk/release-checks.ts).
 * Before an alias moves, it invokes the new version of each function directly, with the events
 * API Gateway would send, and reports `Failed` to CodeDeploy unless each answers as the API
 * promises; a failed hook stops the deployment before any client reaches the new version.
 *
 * What it checks: the authorizer allows the stage's canary key (kept in Secrets Manager by
 * `npm run keys -- canary`) with the key's usage identifier, and refuses a wrong key with exactly
 * `Unauthorized`; the list answers 200 with a JSON array of valid Orders, not empty while the
 * table's item count says it holds orders; a cancel of an id the hook first found absent answers
 * 404 order_not_found, of a malformed id 400 invalid_order_id; the v2 list's first page and a page of
 * pending orders (shared/v2-page-checks.ts). It writes nothing: the cancelled id does not exist, and
 * a cancel never creates an order.
 *
 * It never fails a good release for being busy, and always answers: three deployments of one
 * release run it at once beside the synthetic client, so its requests carry an identity of their
 * own per deployment (no list lease shared with them), a throttle or a 429/503 is waited out until
 * its deadline (the function's timeout less reportMarginMs), every check stops at that deadline,
 * and whatever fails (its environment included) is reported as Failed with the reason.
 *
 * It ships as a bundle of its own, not as one of the service's functions: nothing of it is on a
 * client's path. The answers are judged by the smoke check's own code (shared/smoke-check.ts).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { CodeDeployClient, PutLifecycleEventHookExecutionStatusCommand } from '@aws-sdk/client-codedeploy';
import { DescribeTableCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Context } from 'aws-lambda';
import { z } from 'zod';
import { type CanaryKey, readCanaryKey } from '../shared/canary-key.ts';
import { completeOrdersOf, expectError, fail, listedOrders } from '../shared/smoke-check.ts';
import { answerOf, invoke, invokeStreamed, retriedWhileBusy, untilDeadline } from '../shared/hook-invocations.ts';
import { basePath } from '../shared/routes.ts';
import { type AskPage, v2PageAnswers, v2StatusPageAnswers } from '../shared/v2-page-checks.ts';

/** What CodeDeploy sends a lifecycle hook. */
export type HookEvent = { readonly DeploymentId: string; readonly LifecycleEventHookExecutionId: string };

const settingsSchema = z.object({
  AUTHORIZER_VERSION_ARN: z.string().min(1),
  LIST_ORDERS_VERSION_ARN: z.string().min(1),
  CANCEL_ORDER_VERSION_ARN: z.string().min(1),
  LIST_ORDERS_PAGED_VERSION_ARN: z.string().min(1),
  ORDERS_TABLE: z.string().min(1),
  CANARY_KEY_SECRET: z.string().min(1),
  /** `arn:<partition>:execute-api:<region>:<account>:<api id>/<stage>`: what the authorizer's methodArn starts with. */
  METHOD_ARN_PREFIX: z.string().regex(/^arn:[\w-]+:execute-api:[\w-]+:\d{12}:\w+\/[\w-]+$/),
});
type Settings = z.infer<typeof settingsSchema>;

/**
 * Time kept back from the function's own timeout: the checks stop this long before it, so that
 * the report to CodeDeploy (retried by the SDK) is always sent, whatever the checks were doing.
 */
export const reportMarginMs = 30_000;
/** Of the list, the hook reads this much and checks the orders in it, as the synthetic client does. */
export const listPrefixBytes = 256 * 1024;

const dynamodb = new DynamoDBClient({});
// The one call that must get through: more attempts than the SDK's default three.
const codedeploy = new CodeDeployClient({ maxAttempts: 6 });
const secrets = new SecretsManagerClient({});

/** What every check of one hook run shares: the settings, the deployment's own identity, the checks' deadline. */
type HookRun = {
  readonly settings: Settings;
  readonly canary: CanaryKey;
  /**
   * The principal the hook's list and cancel events carry: one per deployment, so that a list's
   * lease (held per principal) is never one the synthetic client or another deployment's hook
   * holds. The tier stays the canary key's, as the authorizer answered it.
   */
  readonly identity: string;
  /** `Date.now()` past which no check starts a call: the function's timeout less reportMarginMs. */
  readonly deadline: number;
};

const stageOf = (settings: Settings) => settings.METHOD_ARN_PREFIX.split('/').at(-1)!;
const apiIdOf = (settings: Settings) => settings.METHOD_ARN_PREFIX.split(':').at(-1)!.split('/')[0]!;

/** The TOKEN authorizer's event for a request to the list. */
const tokenEvent = (settings: Settings, key: string) => ({
  type: 'TOKEN',
  authorizationToken: `Bearer ${key}`,
  methodArn: `${settings.METHOD_ARN_PREFIX}/GET${basePath}/store/orders`,
});

/** A REST API proxy event (payload 1.0), as API Gateway sends it once the authorizer allowed the request. */
const proxyEvent = (settings: Settings, method: 'GET' | 'DELETE', path: string, authorizer: Record<string, unknown>) => {
  const stage = stageOf(settings);
  const requestId = `pre-traffic-${randomBytes(8).toString('hex')}`;
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
      apiId: apiIdOf(settings),
      identity: { sourceIp: '127.0.0.1', userAgent: 'store-orders-pre-traffic-hook' },
      authorizer,
    },
    body: null,
    isBase64Encoded: false,
  };
};

/** The orders table as DescribeTable describes it: its item count, its indexes' status. */
const describeOrders = (run: HookRun) => async () =>
  (await dynamodb.send(new DescribeTableCommand({ TableName: run.settings.ORDERS_TABLE }), { abortSignal: untilDeadline(run) })).Table;

/** An order id nobody holds: a random negative int64, confirmed absent with a consistent read. */
const absentOrderId = async (run: HookRun): Promise<string> => {
  for (let attempt = 0; attempt < 5; attempt++) {
    const id = `-${randomInt(1, 2 ** 47)}`;
    const found = await dynamodb.send(
      new GetItemCommand({
        TableName: run.settings.ORDERS_TABLE,
        Key: { id: { N: id } },
        ConsistentRead: true,
        ProjectionExpression: 'id',
      }),
      { abortSignal: untilDeadline(run) },
    );
    if (found.Item === undefined) return id;
  }
  return fail('found no absent order id in 5 tries');
};

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

/** One named check of the new versions; it returns its PASS line's text or throws its FAIL reason. */
export type Check = { readonly name: string; readonly run: () => Promise<string> };

/** What the authorizer's Allow gives the list and cancel events: its context, under the run's own identity. */
type AuthorizerContext = { value: Record<string, unknown> };

const authorizerAllows = (run: HookRun, context: AuthorizerContext): Check => ({
  name: 'authorizer allows the canary key',
  run: async () => {
    const { functionError, payload } = await retriedWhileBusy(
      run,
      () => invoke(run, run.settings.AUTHORIZER_VERSION_ARN, tokenEvent(run.settings, run.canary.key)),
      () => undefined,
    );
    if (functionError !== undefined) fail(`refused it (${functionError}): ${JSON.stringify(payload).slice(0, 200)}`);
    const answer = payload as { principalId?: string; policyDocument?: { Statement?: { Effect?: string }[] } } & Record<string, unknown>;
    if (answer.policyDocument?.Statement?.[0]?.Effect !== 'Allow') fail(`no Allow policy: ${JSON.stringify(answer).slice(0, 200)}`);
    if (answer.usageIdentifierKey !== run.canary.usageIdentifierKey) fail("the answer does not carry the key's usage identifier");
    context.value = { ...(answer.context as Record<string, unknown>), principalId: run.identity, keyId: run.identity };
    return `Allow for ${answer.principalId}, with its usage identifier`;
  },
});

const authorizerRefuses = (run: HookRun): Check => ({
  name: 'authorizer refuses a wrong key',
  run: async () => {
    const event = tokenEvent(run.settings, wrongKeyLike(run.canary.key));
    const { functionError, payload } = await retriedWhileBusy(
      run,
      () => invoke(run, run.settings.AUTHORIZER_VERSION_ARN, event),
      () => undefined,
    );
    // Exactly this message is what API Gateway turns into 401; anything else becomes a 500.
    if (functionError === undefined || payload?.errorMessage !== 'Unauthorized')
      fail(`expected the error "Unauthorized", got ${functionError ?? 'an answer'}: ${JSON.stringify(payload).slice(0, 200)}`);
    return 'Unauthorized';
  },
});

const listAnswers = (run: HookRun, context: AuthorizerContext): Check => ({
  name: 'list',
  run: async () => {
    const answer = await retriedWhileBusy(
      run,
      () =>
        invokeStreamed(
          run,
          run.settings.LIST_ORDERS_VERSION_ARN,
          proxyEvent(run.settings, 'GET', '/store/orders', context.value),
          listPrefixBytes,
        ),
      (value) => value.status,
    );
    const orders = listedOrders(answer.cut ? { ...answer, body: completeOrdersOf(answer.body) } : answer);
    const itemCount = (await describeOrders(run)())?.ItemCount ?? 0;
    if (orders.length === 0 && itemCount > 0) fail(`answered [] while the table's item count is ${itemCount}`);
    const what = answer.cut
      ? `the first ${orders.length} orders valid (reading stopped after ${listPrefixBytes} bytes)`
      : `${orders.length} valid orders`;
    return `200, ${what} (table item count ${itemCount})`;
  },
});

/** A v2 page from the new version (its handler reads only the query parameters); a 503 is waited out unless asked for. */
const askPage =
  (run: HookRun, context: AuthorizerContext): AskPage =>
  async (query, { unavailable } = { unavailable: 'wait' }) => {
    const event = { ...proxyEvent(run.settings, 'GET', '/store/orders', context.value), queryStringParameters: query };
    const ask = async () => answerOf(await invoke(run, run.settings.LIST_ORDERS_PAGED_VERSION_ARN, event));
    return retriedWhileBusy(run, ask, (value) => (value.status === 503 && unavailable === 'answer' ? undefined : value.status));
  };

const cancelAnswers = (
  run: HookRun,
  context: AuthorizerContext,
  name: string,
  id: () => Promise<string>,
  status: number,
  code: string,
): Check => ({
  name,
  run: async () => {
    const orderId = await id();
    const event = proxyEvent(run.settings, 'DELETE', `/store/orders/${orderId}`, context.value);
    const answer = await retriedWhileBusy(
      run,
      async () => answerOf(await invoke(run, run.settings.CANCEL_ORDER_VERSION_ARN, event)),
      (value) => value.status,
    );
    return `order ${orderId}: ${expectError(answer, status, code)}`;
  },
});

/**
 * The checks, in order (the authorizer's Allow gives the others its context). Each is a small
 * named check: one more function (another route) is one more entry here.
 */
const checks = (run: HookRun): Check[] => {
  const context: AuthorizerContext = { value: { principalId: run.identity, keyId: run.identity } };
  return [
    authorizerAllows(run, context),
    authorizerRefuses(run),
    listAnswers(run, context),
    v2PageAnswers(askPage(run, context)),
    v2StatusPageAnswers(askPage(run, context), describeOrders(run)),
    cancelAnswers(run, context, 'cancel of an absent order', () => absentOrderId(run), 404, 'order_not_found'),
    cancelAnswers(run, context, 'cancel of a malformed id', async () => 'pre-traffic-check', 400, 'invalid_order_id'),
  ];
};

type Outcome = { lines: string[]; failed: string[] };

const failure = (name: string, reason: string): Outcome => ({ lines: [`FAIL  ${name}: ${reason}`], failed: [name] });
const reasonOf = (error: unknown) =>
  error instanceof Error
    ? error.name === 'TimeoutError' || error.name === 'AbortError'
      ? 'no answer before the deadline'
      : error.message
    : String(error);

/**
 * `work`, or a TimeoutError shortly after the deadline: a call without an abort signal of its own
 * cannot outlast it either (calls with one stop at the deadline itself and say why).
 */
const withinDeadline = <T>(deadline: number, work: Promise<T>): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    const error = Object.assign(new Error('the deadline passed'), { name: 'TimeoutError' });
    timer = setTimeout(() => reject(error), Math.max(1, deadline + 2_000 - Date.now()));
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
};

/** Every check's outcome, one line each, and the names of those that failed; none starts or runs past the deadline. */
export const runChecks = async (event: HookEvent, deadline: number): Promise<Outcome> => {
  const parsed = settingsSchema.safeParse(process.env);
  if (!parsed.success) return failure('settings', `the hook's environment is invalid: ${parsed.error.message.replaceAll('\n', ' ')}`);
  const settings = parsed.data;
  let canary: CanaryKey;
  try {
    canary = await withinDeadline(deadline, readCanaryKey(secrets, settings.CANARY_KEY_SECRET));
  } catch (error) {
    const fix = 'create it with `npm run keys -- canary --stage <stage>`';
    return failure('canary key', `secret ${settings.CANARY_KEY_SECRET} unreadable (${reasonOf(error)}); ${fix}`);
  }
  const run: HookRun = { settings, canary, identity: `pre-traffic-${event.DeploymentId}`, deadline };
  const lines: string[] = [];
  const failed: string[] = [];
  for (const { name, run: check } of checks(run)) {
    try {
      if (Date.now() >= deadline) fail('not started: the checks reached their deadline');
      lines.push(`PASS  ${name}: ${await withinDeadline(deadline, check())}`);
    } catch (error) {
      failed.push(name);
      lines.push(`FAIL  ${name}: ${reasonOf(error)}`);
    }
  }
  // The key never reaches a log line, whatever a function echoed.
  return { lines: lines.map((line) => line.replaceAll(canary.key, '<canary key>')), failed };
};

/** Sends the outcome to CodeDeploy; a report that cannot be sent is thrown (the invocation fails, and the log says why). */
const report = async (event: HookEvent, status: 'Succeeded' | 'Failed') =>
  codedeploy.send(
    new PutLifecycleEventHookExecutionStatusCommand({
      deploymentId: event.DeploymentId,
      lifecycleEventHookExecutionId: event.LifecycleEventHookExecutionId,
      status,
    }),
  );

export const handler = async (event: HookEvent, context: Pick<Context, 'getRemainingTimeInMillis'>) => {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - reportMarginMs;
  const { lines, failed } = await runChecks(event, deadline).catch((error: unknown) => failure('hook', reasonOf(error)));
  const status = failed.length === 0 ? 'Succeeded' : 'Failed';
  for (const line of lines) console.log(JSON.stringify({ level: line.startsWith('FAIL') ? 'ERROR' : 'INFO', message: line }));
  const summary = failed.length === 0 ? `all ${lines.length} checks passed` : `failed: ${failed.join(', ')}`;
  try {
    await report(event, status);
  } catch (error) {
    console.log(JSON.stringify({ level: 'ERROR', message: `could not report ${status} to CodeDeploy (${summary}): ${reasonOf(error)}` }));
    throw error;
  }
  console.log(JSON.stringify({ level: failed.length === 0 ? 'INFO' : 'ERROR', message: `reported ${status} to CodeDeploy: ${summary}` }));
  return { status, failed, lines };
};
