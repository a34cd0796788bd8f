/**
 * What one request makes CloudWatch hold, for the alarm scenarios: the EMF lines a shipped bundle
 * printed for its invocation (parsed as CloudWatch parses embedded metric format), the metrics
 * Lambda publishes of that invocation, and API Gateway's metrics and access log line of the request
 * (the template's own log format, through the template's own metric filters).
 */
import { resourcePath, type Route } from '../../../shared/routes.ts';
import type { Line } from '../bundles.ts';
import { filteredDatapoints } from '../cloudwatch/filter-patterns.ts';
import type { Datum } from '../cloudwatch/metric-store.ts';
import type { Outcome } from '../lambda-runtime.ts';
import { resolve, type Template } from '../template.ts';

/** The version a bundle runs as (test/lib/bundles.ts sets AWS_LAMBDA_FUNCTION_VERSION so). */
const bundleVersion = '1';

/** One invocation of a function's bundle: what it printed as metrics, and how Lambda saw it end. */
export type FunctionRun = {
  readonly emf: readonly Datum[];
  /** The HTTP status of its answer (a route function), or 200 / 401 / 500 for an authorizer's Allow, refusal or failure. */
  readonly status: number;
  /** Whether Lambda counts the invocation in Errors (it threw, timed out, or its stream ended with an error). */
  readonly failed: boolean;
  /** The answer's `Retry-After` (seconds), when it has one. */
  readonly retryAfterSeconds?: number;
  readonly durationMs: number;
};

/**
 * A scenario's times, not this machine's: a busy test machine must not decide a latency alarm.
 * Each Milliseconds value a bundle printed is replaced by the request kind's nominal time.
 */
export type Times = { readonly answerMs: number; readonly totalMs: number };

const timeOf = (metric: string, value: number, times: Times) => {
  if (metric === 'AnswerLatency' || metric === 'ListFirstByte') return times.answerMs;
  if (metric === 'ListDuration') return times.totalMs;
  if (metric === 'DynamoDbLatency') return Math.min(10, times.answerMs);
  throw new Error(`${metric} (${value} ms): give it a nominal time in the scenarios`);
};

/** The datapoints of the EMF lines among `lines` (CloudWatch's embedded metric format: every metric under every dimension set). */
export const emfDatapoints = (lines: readonly Line[], times: Times): Datum[] =>
  lines.flatMap((line) => {
    const aws = line._aws as {
      CloudWatchMetrics?: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit?: string }[] }[];
    };
    return (aws?.CloudWatchMetrics ?? []).flatMap(({ Namespace, Dimensions, Metrics }) =>
      Metrics.flatMap(({ Name, Unit }) =>
        [line[Name]].flat().flatMap((raw) =>
          Dimensions.map((set) => ({
            namespace: Namespace,
            name: Name,
            dimensions: Object.fromEntries(set.map((key) => [key, String(line[key])])),
            value: Unit === 'Milliseconds' ? timeOf(Name, Number(raw), times) : Number(raw),
          })),
        ),
      ),
    );
  });

type Answered = { statusCode?: number; headers?: Record<string, unknown> };

/** An answer's Retry-After in seconds, if it carries one (whatever the header's case). */
const retryAfterOf = ({ headers }: Answered): { retryAfterSeconds?: number } => {
  const value = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'retry-after')?.[1];
  return value === undefined ? {} : { retryAfterSeconds: Number(value) };
};

/** How Lambda saw an invocation end, and the status its caller got. */
export const functionRun = (outcome: Outcome, lines: readonly Line[], times: Times): FunctionRun => {
  const emf = emfDatapoints(lines, times);
  const durationMs = times.totalMs;
  switch (outcome.outcome) {
    case 'returned': {
      const value = outcome.value as Answered;
      return { emf, status: value.statusCode ?? 200, failed: false, durationMs, ...retryAfterOf(value) };
    }
    case 'streamed': {
      const prelude = outcome.prelude as Answered & { statusCode: number };
      return { emf, status: prelude.statusCode, failed: outcome.error !== undefined, durationMs, ...retryAfterOf(prelude) };
    }
    case 'threw':
      return { emf, status: outcome.error === 'Unauthorized' ? 401 : 500, failed: true, durationMs };
    case 'timed out':
      return { emf, status: 504, failed: true, durationMs };
  }
};

/** A run's EMF datapoints as the version `label` would publish them (the bundle ran as version 1). */
export const asVersion = (emf: readonly Datum[], label: string): Datum[] =>
  emf.map((datum) =>
    datum.dimensions.version === bundleVersion ? { ...datum, dimensions: { ...datum.dimensions, version: label } } : datum,
  );

/** A function of the template: its name and its live alias as the template's alarms name them. */
export type TemplateFunction = { readonly functionName: string; readonly resource: string };

/**
 * What Lambda publishes of one invocation of the live alias that ran `version` (FunctionName,
 * alias, and ExecutedVersion dimensions), or of one it throttled (no version ran).
 */
export const lambdaDatapoints = (
  fn: TemplateFunction,
  version: string,
  run: Pick<FunctionRun, 'failed' | 'durationMs'> | 'throttled',
): Datum[] => {
  const sets: Record<string, string>[] = [
    { FunctionName: fn.functionName },
    { FunctionName: fn.functionName, Resource: fn.resource },
    ...(run === 'throttled' ? [] : [{ FunctionName: fn.functionName, Resource: fn.resource, ExecutedVersion: version }]),
  ];
  const values: [string, number][] =
    run === 'throttled'
      ? [['Throttles', 1]]
      : [
          ['Invocations', 1],
          ['Errors', run.failed ? 1 : 0],
          ['Duration', run.durationMs],
        ];
  return sets.flatMap((dimensions) => values.map(([name, value]) => ({ namespace: 'AWS/Lambda', name, dimensions, value })));
};

/** One request as API Gateway answers it: its route (none when no route matched), status, latency, and the gateway's error type if it answered itself. */
export type GatewayAnswer = {
  readonly route?: Route;
  readonly method: string;
  readonly status: number;
  readonly latencyMs: number;
  readonly errorResponseType?: string;
};

/** The stage's access log format, its log group, API name and stage name, from the template. */
export const apiOf = (template: Template) => {
  const stage = Object.values(template.Resources).find((resource) => resource.Type === 'AWS::ApiGateway::Stage')!.Properties;
  const api = Object.values(template.Resources).find((resource) => resource.Type === 'AWS::ApiGateway::RestApi')!.Properties;
  const setting = stage.AccessLogSetting as { Format: string; DestinationArn: unknown };
  const logGroup = `\${${/\$\{(\w+)(?:\.Arn)?\}$/.exec(String(resolve(setting.DestinationArn)))![1]}}`;
  return { format: setting.Format, logGroup, apiName: String(api.Name), stageName: String(stage.StageName) };
};

/** The access log line of a request, the template's format filled in ("-" where the request has nothing). */
const accessLine = (format: string, answer: GatewayAnswer): Record<string, unknown> => {
  const values: Record<string, string | number> = {
    status: answer.status,
    responseLatency: answer.latencyMs,
    httpMethod: answer.method,
    resourcePath: answer.route === undefined ? '-' : resourcePath(answer.route),
    'error.responseType': answer.errorResponseType ?? '-',
  };
  return JSON.parse(
    format.replaceAll(/\$context\.([\w.]+)/g, (_all, name: string) => String(values[name] ?? (name === 'status' ? 0 : '-'))),
  );
};

/** API Gateway's metrics of the request (stage-wide, and per method when a route matched) and its access log's filtered metrics. */
export const gatewayDatapoints = (template: Template, answer: GatewayAnswer): Datum[] => {
  const api = apiOf(template);
  const sets: Record<string, string>[] = [
    { ApiName: api.apiName, Stage: api.stageName },
    ...(answer.route === undefined
      ? []
      : [{ ApiName: api.apiName, Stage: api.stageName, Resource: resourcePath(answer.route), Method: answer.method }]),
  ];
  const values: [string, number][] = [
    ['Count', 1],
    ['4XXError', answer.status >= 400 && answer.status < 500 ? 1 : 0],
    ['5XXError', answer.status >= 500 ? 1 : 0],
    ['Latency', answer.latencyMs],
  ];
  return [
    ...sets.flatMap((dimensions) => values.map(([name, value]) => ({ namespace: 'AWS/ApiGateway', name, dimensions, value }))),
    ...filteredDatapoints(template, api.logGroup, accessLine(api.format, answer)),
  ];
};
