/**
 * The AWS APIs the pre-traffic hook and the canary call that have no local server, on one HTTP
 * port, as their wire protocols define them: Lambda's Invoke and InvokeWithResponseStream (REST
 * JSON, the stream as an AWS event stream) and GetAlias (the version each function's alias points
 * at, `aliases`), CodeDeploy's PutLifecycleEventHookExecutionStatus and
 * Secrets Manager's GetSecretValue (JSON 1.1), CloudWatch's DescribeAlarms and PutMetricData (JSON
 * 1.0, the protocol the SDK's CloudWatch client speaks; metric alarms by name, an unknown name left
 * out as CloudWatch leaves it out). An invocation runs the function's shipped bundle on
 * the runtime stand-in (./bundles.ts), as Lambda would. A function given a reserved concurrency
 * (`concurrency`, by its unqualified ARN: Lambda reserves it for the function, all its versions
 * together) is throttled past it as Lambda throttles: 429 TooManyRequestsException, reason
 * ReservedFunctionConcurrentInvocationLimitExceeded. SDK clients reach it through the
 * `AWS_ENDPOINT_URL_<SERVICE>` variables (`endpoints`).
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { type DeployedFunction, type Run, runBundleAsync } from './bundles.ts';
import type { Outcome } from './lambda-runtime.ts';

export type FakeAlarm = { readonly state: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA'; readonly reason: string };

export type HookReport = { deploymentId: string; lifecycleEventHookExecutionId: string; status: string };

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => new Uint8Array(Buffer.from(text, 'utf8')),
);

const event = (type: string, body: Uint8Array, contentType: string) =>
  codec.encode({
    headers: {
      ':message-type': { type: 'string', value: 'event' },
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: contentType },
    },
    body,
  });

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/** The bytes a streaming function wrote: its HTTP prelude, eight NUL bytes, its body (as the runtime interface client writes them). */
const streamedBytes = (outcome: Extract<Outcome, { outcome: 'streamed' }>) => {
  const body = Buffer.from(outcome.body, 'base64');
  return outcome.prelude === undefined ? body : Buffer.concat([Buffer.from(JSON.stringify(outcome.prelude)), Buffer.alloc(8), body]);
};

/** What Lambda's error payload holds for a function that threw. */
const errorPayload = (message: string) => JSON.stringify({ errorType: 'Error', errorMessage: message, trace: [] });

const invoke = (outcome: Outcome, res: ServerResponse, version: string) => {
  const headers = { 'Content-Type': 'application/json', 'X-Amz-Executed-Version': version };
  if (outcome.outcome === 'returned') return res.writeHead(200, headers).end(JSON.stringify(outcome.value ?? null));
  if (outcome.outcome === 'streamed') return res.writeHead(200, headers).end(streamedBytes(outcome));
  const message = outcome.outcome === 'threw' ? outcome.error : 'Task timed out';
  return res.writeHead(200, { ...headers, 'X-Amz-Function-Error': 'Unhandled' }).end(errorPayload(message));
};

const invokeStreaming = (outcome: Outcome, res: ServerResponse, version: string) => {
  res.writeHead(200, { 'Content-Type': 'application/vnd.amazon.eventstream', 'X-Amz-Executed-Version': version });
  const payload =
    outcome.outcome === 'streamed'
      ? streamedBytes(outcome)
      : outcome.outcome === 'returned'
        ? Buffer.from(JSON.stringify(outcome.value ?? null))
        : undefined;
  if (payload !== undefined && payload.length > 0) res.write(event('PayloadChunk', payload, 'application/octet-stream'));
  const error =
    outcome.outcome === 'threw'
      ? outcome.error
      : outcome.outcome === 'timed out'
        ? 'Task timed out'
        : outcome.outcome === 'streamed'
          ? outcome.error
          : undefined;
  const complete = error === undefined ? {} : { ErrorCode: 'Unhandled', ErrorDetails: error };
  res.end(event('InvokeComplete', Buffer.from(JSON.stringify(complete)), 'application/json'));
};

/** What the fake holds (set by the test) and what it saw (read by the test). */
const fakeState = () => ({
  /** Function (version) ARN → the bundle that answers for it. */
  functions: new Map<string, DeployedFunction>(),
  secrets: new Map<string, string>(),
  /** Metric alarm name → its state; and the alarm names of each DescribeAlarms call, in order. */
  alarms: new Map<string, FakeAlarm>(),
  alarmQueries: [] as string[][],
  reports: [] as HookReport[],
  invoked: [] as string[],
  /** Function ARN (unqualified) → the version its `live` alias points at (GetAlias). */
  aliases: new Map<string, string>(),
  /** Function ARN (unqualified) → its reserved concurrency, all its versions together: invocations past it are throttled. */
  concurrency: new Map<string, number>(),
  running: new Map<string, number>(),
  throttled: [] as string[],
  /** Every invocation's function ARN and event, in order. */
  events: [] as { arn: string; event: unknown }[],
  /** Every invocation's run of its bundle: its outcome and what it printed. */
  runs: [] as { arn: string; run: Run }[],
  /** Every datum PutMetricData received, with its namespace. */
  metricData: [] as ({ Namespace: string } & Record<string, unknown>)[],
});
type FakeState = ReturnType<typeof fakeState>;

const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.1' }).end(JSON.stringify(body));

const lambdaPath = /^\/(2015-03-31|2021-11-15)\/functions\/([^/]+)\/(invocations|response-streaming-invocations)$/;
const aliasPath = /^\/2015-03-31\/functions\/([^/]+)\/aliases\/([^/]+)$/;

/** Lambda's GetAlias: the version the alias points at, or ResourceNotFoundException. */
const getAlias = (state: FakeState, url: URL, res: ServerResponse) => {
  const [, encodedName, alias] = aliasPath.exec(url.pathname)!;
  const name = decodeURIComponent(encodedName!);
  const version = alias === 'live' ? state.aliases.get(name) : undefined;
  if (version === undefined)
    return res
      .writeHead(404, { 'Content-Type': 'application/json', 'X-Amzn-ErrorType': 'ResourceNotFoundException' })
      .end(JSON.stringify({ Type: 'User', message: `Alias not found: ${name}:${alias}` }));
  return res
    .writeHead(200, { 'Content-Type': 'application/json' })
    .end(JSON.stringify({ AliasArn: `${name}:${alias}`, Name: alias, FunctionVersion: version, RevisionId: randomUUID() }));
};

/** Lambda's Invoke and InvokeWithResponseStream: the function's bundle runs, unless it is unknown or throttled. */
const answerInvoke = async (state: FakeState, url: URL, body: string, res: ServerResponse) => {
  const [, , encodedName, kind] = lambdaPath.exec(url.pathname)!;
  const name = decodeURIComponent(encodedName!);
  const arn = url.searchParams.has('Qualifier') ? `${name}:${url.searchParams.get('Qualifier')}` : name;
  const fn = state.functions.get(arn);
  // Reserved concurrency is the function's, whichever version runs.
  const functionArn = name.split(':').slice(0, 7).join(':');
  const version = url.searchParams.get('Qualifier') ?? name.split(':')[7] ?? '$LATEST';
  if (fn === undefined)
    return res
      .writeHead(404, { 'Content-Type': 'application/json', 'X-Amzn-ErrorType': 'ResourceNotFoundException' })
      .end(JSON.stringify({ Type: 'User', message: `Function not found: ${arn}` }));
  if ((state.running.get(functionArn) ?? 0) >= (state.concurrency.get(functionArn) ?? Infinity)) {
    state.throttled.push(arn);
    return res
      .writeHead(429, { 'Content-Type': 'application/json', 'X-Amzn-ErrorType': 'TooManyRequestsException' })
      .end(JSON.stringify({ Type: 'User', message: 'Rate Exceeded.', Reason: 'ReservedFunctionConcurrentInvocationLimitExceeded' }));
  }
  state.invoked.push(arn);
  state.events.push({ arn, event: JSON.parse(body) as unknown });
  state.running.set(functionArn, (state.running.get(functionArn) ?? 0) + 1);
  try {
    const run = await runBundleAsync(fn, [{ name: 'invoke', requestId: randomUUID(), event: JSON.parse(body) }]);
    state.runs.push({ arn, run });
    return kind === 'invocations' ? invoke(run.outcomes[0]!, res, version) : invokeStreaming(run.outcomes[0]!, res, version);
  } finally {
    state.running.set(functionArn, state.running.get(functionArn)! - 1);
  }
};

/** CloudWatch's PutMetricData (JSON 1.0): each datum kept with its namespace. */
const putMetricData = (
  state: FakeState,
  { Namespace, MetricData = [] }: { Namespace: string; MetricData?: Record<string, unknown>[] },
  res: ServerResponse,
) => {
  for (const datum of MetricData) state.metricData.push({ Namespace, ...datum });
  return res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' }).end('{}');
};

/** CloudWatch's DescribeAlarms (JSON 1.0): the named metric alarms that exist. */
const describeAlarms = (state: FakeState, { AlarmNames = [] }: { AlarmNames?: string[] }, res: ServerResponse) => {
  state.alarmQueries.push(AlarmNames);
  const MetricAlarms = AlarmNames.flatMap((name) => {
    const alarm = state.alarms.get(name);
    if (alarm === undefined) return [];
    return [
      {
        AlarmName: name,
        AlarmArn: `arn:aws:cloudwatch:us-east-1:123456789012:alarm:${name}`,
        StateValue: alarm.state,
        StateReason: alarm.reason,
        StateUpdatedTimestamp: Date.now() / 1000,
      },
    ];
  });
  return res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' }).end(JSON.stringify({ MetricAlarms, CompositeAlarms: [] }));
};

/** The JSON 1.1 calls: CodeDeploy's PutLifecycleEventHookExecutionStatus and Secrets Manager's GetSecretValue. */
const answerJson11 = (state: FakeState, req: IncomingMessage, body: string, res: ServerResponse) => {
  const input = JSON.parse(body || '{}') as Record<string, string>;
  switch (req.headers['x-amz-target']) {
    case 'CodeDeploy_20141006.PutLifecycleEventHookExecutionStatus':
      state.reports.push({
        deploymentId: input.deploymentId!,
        lifecycleEventHookExecutionId: input.lifecycleEventHookExecutionId!,
        status: input.status!,
      });
      return json(res, 200, { lifecycleEventHookExecutionId: input.lifecycleEventHookExecutionId });
    case 'secretsmanager.GetSecretValue': {
      const value = state.secrets.get(input.SecretId!);
      if (value === undefined)
        return json(res, 400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
      return json(res, 200, {
        ARN: `arn:aws:secretsmanager:us-east-1:123456789012:secret:${input.SecretId}-AbCdEf`,
        Name: input.SecretId,
        SecretString: value,
        VersionId: randomUUID(),
      });
    }
    default:
      return json(res, 400, {
        __type: 'UnknownOperationException',
        message: `not faked: ${req.method} ${req.url} ${req.headers['x-amz-target']}`,
      });
  }
};

export const startFakeAws = async () => {
  const state = fakeState();
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    if (lambdaPath.test(url.pathname)) return answerInvoke(state, url, body, res);
    if (req.method === 'GET' && aliasPath.test(url.pathname)) return getAlias(state, url, res);
    if (req.headers['x-amz-target'] === 'GraniteServiceVersion20100801.DescribeAlarms')
      return describeAlarms(state, JSON.parse(body || '{}'), res);
    if (req.headers['x-amz-target'] === 'GraniteServiceVersion20100801.PutMetricData')
      return putMetricData(state, JSON.parse(body || '{}'), res);
    return answerJson11(state, req, body, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { running: _running, ...seen } = state;
  return {
    ...seen,
    /** The variables that send the SDK's Lambda, CodeDeploy, Secrets Manager and CloudWatch calls here. */
    endpoints: {
      AWS_ENDPOINT_URL_LAMBDA: url,
      AWS_ENDPOINT_URL_CODEDEPLOY: url,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: url,
      AWS_ENDPOINT_URL_CLOUDWATCH: url,
    },
    close: () => (server.closeAllConnections(), server.close()),
  };
};
