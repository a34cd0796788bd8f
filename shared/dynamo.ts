import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { addCallTiming } from './dynamo-calls.ts';
import { apiError } from './errors.ts';

export type DocumentClient = DynamoDBDocumentClient;

/** A table and the client that reaches it: what every data function takes. */
export type TableRef = { readonly client: DocumentClient; readonly tableName: string };

/**
 * How long a DynamoDB call made for a request may take (docs/operating.md#reliability). Each attempt
 * must connect within 1 s and have DynamoDB's answer begin within 2 s (a GetItem, UpdateItem or
 * Scan page normally answers in milliseconds; 2 s leaves room for a busy DynamoDB Local); at
 * most 3 attempts; and the call as a whole, backoff between attempts included, is aborted at its
 * deadline: 5 s, or the caller's remaining time less 1 s when that is sooner, so a function still
 * has time to answer 503 before Lambda stops it (the authorizer and cancel run for up to 10 s).
 * Calls made without a caller's deadline (tools: table creation, seeding) allow 5 s an attempt.
 */
export const dynamoDbBounds = {
  connectionTimeoutMs: 1_000,
  requestTimeoutMs: 2_000,
  maxAttempts: 3,
  callBudgetMs: 5_000,
  safetyMarginMs: 1_000,
  toolRequestTimeoutMs: 5_000,
} as const;

/** What a deadline is taken from: Lambda's context has it, and so has the local gateway's. */
export type RemainingTime = { getRemainingTimeInMillis(): number };

/** The options of one DynamoDB call, `client.send(command, deadline())`: fresh for each call. */
export type Deadline = () => { abortSignal: AbortSignal; requestTimeout: number };

/**
 * The deadline of each DynamoDB call made for `caller` (a Lambda context): the call budget, cut
 * short by the caller's remaining time less the safety margin. Without a caller, the budget alone.
 */
export const callDeadline =
  (caller?: RemainingTime): Deadline =>
  () => {
    const remainingMs = caller === undefined ? Infinity : caller.getRemainingTimeInMillis() - dynamoDbBounds.safetyMarginMs;
    const ms = Math.min(dynamoDbBounds.callBudgetMs, remainingMs);
    return {
      abortSignal:
        ms > 0 ? AbortSignal.timeout(ms) : AbortSignal.abort(new DOMException('no time left for a DynamoDB call', 'TimeoutError')),
      requestTimeout: dynamoDbBounds.requestTimeoutMs,
    };
  };

/** Credentials a local DynamoDB is signed with. */
export type LocalCredentials = { readonly accessKeyId: string; readonly secretAccessKey: string };

/**
 * A local DynamoDB's credentials when the caller names none: those in the environment, where
 * Lambda puts a function's and the local runtime the ones its DynamoDB Local answers to
 * (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), else `local` for a DynamoDB Local that checks none.
 */
const localCredentials = (env: NodeJS.ProcessEnv = process.env): LocalCredentials =>
  env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
    ? { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY }
    : { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * One document client per DynamoDBClient (two `from()` calls on one client share their
 * translate config, and the second would silently drop `wrapNumbers`). `wrapNumbers` keeps
 * every number as exact text: ids are int64 and must not pass through a JS number.
 */
export const createDocumentClient = (
  options: { endpoint?: string | undefined; region?: string | undefined; credentials?: LocalCredentials | undefined } = {},
): DocumentClient => {
  const local = options.endpoint !== undefined;
  const client = new DynamoDBClient({
    ...(local
      ? {
          endpoint: options.endpoint,
          region: options.region ?? 'us-east-1',
          credentials: options.credentials ?? localCredentials(),
        }
      : options.region === undefined
        ? {}
        : { region: options.region }),
    maxAttempts: dynamoDbBounds.maxAttempts,
    // Without throwOnRequestTimeout, @smithy/node-http-handler only logs a warning when
    // requestTimeout passes and goes on waiting (its setRequestTimeout); with it, the attempt
    // fails with a TimeoutError that the SDK retries. A call's deadline sets a tighter one.
    requestHandler: {
      connectionTimeout: dynamoDbBounds.connectionTimeoutMs,
      requestTimeout: dynamoDbBounds.toolRequestTimeoutMs,
      throwOnRequestTimeout: true,
    },
  });
  // The SDK's logger middleware copies and redacts every response for a logger that is never set:
  // measured by `npm run bench` at ~30% of the list's CPU (docs/developing.md#performance).
  client.middlewareStack.remove('loggerMiddleware');
  // Each call's time, attempts, capacity and throttles, for the request's completion line and metrics.
  addCallTiming(client);
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
    unmarshallOptions: { wrapNumbers: true },
  });
};

const unavailableNames = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  // The call's deadline passed (callDeadline): the SDK stops the attempt and the retries.
  'AbortError',
]);
const unavailableCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE']);

/**
 * DynamoDB failures that retrying later can fix become 503 service_unavailable (the SDK has
 * already retried); anything else is left as it is and becomes a 500.
 */
export const toServiceError = (error: unknown): unknown => {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  const httpStatus = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const transient =
    unavailableNames.has(error.name) ||
    (typeof code === 'string' && unavailableCodes.has(code)) ||
    (httpStatus !== undefined && httpStatus >= 500);
  return transient ? apiError('service_unavailable', undefined, { cause: error }) : error;
};
