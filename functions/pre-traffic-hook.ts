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
 * 404 order_not_found, of a malformed id 400 invalid_order_id. It writes nothing: the cancelled id
 * does not exist, and a cancel never creates an order.
 *
 * It ships as a bundle of its own, not as one of the service's functions: nothing of it is on a
 * client's path. The answers are judged by the smoke check's own code (shared/smoke-check.ts).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { CodeDeployClient, PutLifecycleEventHookExecutionStatusCommand } from '@aws-sdk/client-codedeploy';
import { DescribeTableCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { InvokeCommand, InvokeWithResponseStreamCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { z } from 'zod';
import { type CanaryKey, readCanaryKey } from '../shared/canary-key.ts';
import { type Answer, expectError, fail, listedOrders } from '../shared/smoke-check.ts';
import { basePath } from '../shared/routes.ts';

/** What CodeDeploy sends a lifecycle hook. */
export type HookEvent = { readonly DeploymentId: string; readonly LifecycleEventHookExecutionId: string };

const settings = z
  .object({
    AUTHORIZER_VERSION_ARN: z.string().min(1),
    LIST_ORDERS_VERSION_ARN: z.string().min(1),
    CANCEL_ORDER_VERSION_ARN: z.string().min(1),
    LIST_ORDERS_PAGED_VERSION_ARN: z.string().min(1),
    ORDERS_TABLE: z.string().min(1),
    CANARY_KEY_SECRET: z.string().min(1),
    /** `arn:<partition>:execute-api:<region>:<account>:<api id>/<stage>`: what the authorizer's methodArn starts with. */
    METHOD_ARN_PREFIX: z.string().regex(/^arn:[\w-]+:execute-api:[\w-]+:\d{12}:\w+\/[\w-]+$/),
  })
  .parse(process.env);

const lambda = new LambdaClient({});
const dynamodb = new DynamoDBClient({});
const codedeploy = new CodeDeployClient({});
const secrets = new SecretsManagerClient({});

const stage = settings.METHOD_ARN_PREFIX.split('/').at(-1)!;
const apiId = settings.METHOD_ARN_PREFIX.split(':').at(-1)!.split('/')[0]!;

/** The TOKEN authorizer's event for a request to the list. */
const tokenEvent = (key: string) => ({
  type: 'TOKEN',
  authorizationToken: `Bearer ${key}`,
  methodArn: `${settings.METHOD_ARN_PREFIX}/GET${basePath}/store/orders`,
});

/** A REST API proxy event (payload 1.0), as API Gateway sends it once the authorizer allowed the request. */
const proxyEvent = (method: 'GET' | 'DELETE', path: string, authorizer: Record<string, unknown>) => {
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
      apiId,
      identity: { sourceIp: '127.0.0.1', userAgent: 'store-orders-pre-traffic-hook' },
      authorizer,
    },
    body: null,
    isBase64Encoded: false,
  };
};

/** A buffered invocation: the function's answer, or the error it threw (Lambda's FunctionError). */
const invoke = async (functionArn: string, event: unknown) => {
  const out = await lambda.send(new InvokeCommand({ FunctionName: functionArn, Payload: Buffer.from(JSON.stringify(event)) }));
  const text = Buffer.from(out.Payload ?? new Uint8Array()).toString('utf8');
  return { functionError: out.FunctionError, payload: (text === '' ? null : JSON.parse(text)) as Record<string, unknown> | null };
};

/** A proxy result as the client would receive it. */
const answerOf = (result: Awaited<ReturnType<typeof invoke>>): Answer => {
  if (result.functionError !== undefined)
    fail(`the function failed (${result.functionError}): ${JSON.stringify(result.payload).slice(0, 200)}`);
  const value = result.payload as { statusCode?: number; headers?: Record<string, string>; body?: string } | null;
  return { status: value?.statusCode ?? 0, headers: new Headers(value?.headers ?? {}), body: value?.body ?? '', firstByteMs: 0 };
};

/**
 * A streamed invocation (how API Gateway calls the list): the function writes a JSON prelude
 * (status and headers), eight NUL bytes, then the body.
 */
const invokeStreamed = async (functionArn: string, event: unknown): Promise<Answer> => {
  const started = performance.now();
  const out = await lambda.send(
    new InvokeWithResponseStreamCommand({ FunctionName: functionArn, Payload: Buffer.from(JSON.stringify(event)) }),
  );
  const chunks: Buffer[] = [];
  let firstByteMs: number | undefined;
  for await (const message of out.EventStream ?? []) {
    if (message.PayloadChunk?.Payload !== undefined) {
      firstByteMs ??= performance.now() - started;
      chunks.push(Buffer.from(message.PayloadChunk.Payload));
    }
    const complete = message.InvokeComplete;
    if (complete?.ErrorCode !== undefined) fail(`the stream ended with ${complete.ErrorCode}: ${complete.ErrorDetails ?? ''}`);
  }
  const all = Buffer.concat(chunks);
  const at = all.indexOf(Buffer.alloc(8));
  if (at < 0) fail(`no HTTP prelude in the streamed answer: ${all.subarray(0, 200).toString('utf8')}`);
  const prelude = JSON.parse(all.subarray(0, at).toString('utf8')) as { statusCode?: number; headers?: Record<string, string> };
  return {
    status: prelude.statusCode ?? 0,
    headers: new Headers(prelude.headers ?? {}),
    body: all.subarray(at + 8).toString('utf8'),
    firstByteMs: firstByteMs ?? 0,
  };
};

/** An order id nobody holds: a random negative int64, confirmed absent with a consistent read. */
const absentOrderId = async (): Promise<string> => {
  for (let attempt = 0; attempt < 5; attempt++) {
    const id = `-${randomInt(1, 2 ** 47)}`;
    const found = await dynamodb.send(
      new GetItemCommand({ TableName: settings.ORDERS_TABLE, Key: { id: { N: id } }, ConsistentRead: true, ProjectionExpression: 'id' }),
    );
    if (found.Item === undefined) return id;
  }
  return fail('found no absent order id in 5 tries');
};

type Check = { readonly name: string; readonly run: () => Promise<string> };

/** The checks, in order: the authorizer's Allow gives the list and cancel events their authorizer context. */
const checks = (canary: CanaryKey): Check[] => {
  let authorizerContext: Record<string, unknown> = { principalId: canary.keyId, keyId: canary.keyId };
  return [
    {
      name: 'authorizer allows the canary key',
      run: async () => {
        const { functionError, payload } = await invoke(settings.AUTHORIZER_VERSION_ARN, tokenEvent(canary.key));
        if (functionError !== undefined) fail(`refused it (${functionError}): ${JSON.stringify(payload).slice(0, 200)}`);
        const answer = payload as { principalId?: string; policyDocument?: { Statement?: { Effect?: string }[] } } & Record<
          string,
          unknown
        >;
        if (answer.policyDocument?.Statement?.[0]?.Effect !== 'Allow') fail(`no Allow policy: ${JSON.stringify(answer).slice(0, 200)}`);
        if (answer.usageIdentifierKey !== canary.usageIdentifierKey) fail("the answer does not carry the key's usage identifier");
        authorizerContext = { principalId: answer.principalId, ...(answer.context as Record<string, unknown>) };
        return `Allow for ${answer.principalId}, with its usage identifier`;
      },
    },
    {
      name: 'authorizer refuses a wrong key',
      run: async () => {
        const wrongKey = `${canary.key.slice(0, -16)}${randomBytes(8).toString('hex')}`;
        const { functionError, payload } = await invoke(settings.AUTHORIZER_VERSION_ARN, tokenEvent(wrongKey));
        // Exactly this message is what API Gateway turns into 401; anything else becomes a 500.
        if (functionError === undefined || payload?.errorMessage !== 'Unauthorized')
          fail(`expected the error "Unauthorized", got ${functionError ?? 'an answer'}: ${JSON.stringify(payload).slice(0, 200)}`);
        return 'Unauthorized';
      },
    },
    {
      name: 'list',
      run: async () => {
        const answer = await invokeStreamed(settings.LIST_ORDERS_VERSION_ARN, proxyEvent('GET', '/store/orders', authorizerContext));
        const orders = listedOrders(answer);
        const table = await dynamodb.send(new DescribeTableCommand({ TableName: settings.ORDERS_TABLE }));
        const itemCount = table.Table?.ItemCount ?? 0;
        if (orders.length === 0 && itemCount > 0) fail(`answered [] while the table's item count is ${itemCount}`);
        return `200, ${orders.length} valid orders (table item count ${itemCount})`;
      },
    },
    {
      // The v2 list's first page (its handler reads only the query parameters, none here).
      name: 'v2 page',
      run: async () => {
        const answer = answerOf(
          await invoke(settings.LIST_ORDERS_PAGED_VERSION_ARN, proxyEvent('GET', '/store/orders', authorizerContext)),
        );
        if (answer.status !== 200) fail(`answered ${answer.status}: ${answer.body.slice(0, 200)}`);
        const { orders } = JSON.parse(answer.body) as { orders?: unknown };
        if (!Array.isArray(orders)) return fail('answered 200 without an orders array');
        return `200, ${orders.length} orders on the first page`;
      },
    },
    {
      name: 'cancel of an absent order',
      run: async () => {
        const id = await absentOrderId();
        const result = await invoke(settings.CANCEL_ORDER_VERSION_ARN, proxyEvent('DELETE', `/store/orders/${id}`, authorizerContext));
        return `order ${id}: ${expectError(answerOf(result), 404, 'order_not_found')}`;
      },
    },
    {
      name: 'cancel of a malformed id',
      run: async () => {
        const result = await invoke(
          settings.CANCEL_ORDER_VERSION_ARN,
          proxyEvent('DELETE', '/store/orders/pre-traffic-check', authorizerContext),
        );
        return expectError(answerOf(result), 400, 'invalid_order_id');
      },
    },
  ];
};

/** Every check's outcome, one line each, and the names of those that failed. */
export const runChecks = async (): Promise<{ lines: string[]; failed: string[] }> => {
  let canary: CanaryKey;
  try {
    canary = await readCanaryKey(secrets, settings.CANARY_KEY_SECRET);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const fix = 'create it with `npm run keys -- canary --stage <stage>`';
    return { lines: [`FAIL  canary key: secret ${settings.CANARY_KEY_SECRET} unreadable (${reason}); ${fix}`], failed: ['canary key'] };
  }
  const lines: string[] = [];
  const failed: string[] = [];
  for (const { name, run } of checks(canary)) {
    try {
      lines.push(`PASS  ${name}: ${await run()}`);
    } catch (error) {
      failed.push(name);
      lines.push(`FAIL  ${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  // The key never reaches a log line, whatever a function echoed.
  return { lines: lines.map((line) => line.replaceAll(canary.key, '<canary key>')), failed };
};

export const handler = async (event: HookEvent) => {
  const { lines, failed } = await runChecks();
  const status = failed.length === 0 ? 'Succeeded' : 'Failed';
  for (const line of lines) console.log(JSON.stringify({ level: line.startsWith('FAIL') ? 'ERROR' : 'INFO', message: line }));
  await codedeploy.send(
    new PutLifecycleEventHookExecutionStatusCommand({
      deploymentId: event.DeploymentId,
      lifecycleEventHookExecutionId: event.LifecycleEventHookExecutionId,
      status,
    }),
  );
  const summary = failed.length === 0 ? `all ${lines.length} checks passed` : `failed: ${failed.join(', ')}`;
  console.log(JSON.stringify({ level: failed.length === 0 ? 'INFO' : 'ERROR', message: `reported ${status} to CodeDeploy: ${summary}` }));
  return { status, failed, lines };
};
