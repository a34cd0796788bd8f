import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { apiError } from './errors.ts';

export type DocumentClient = DynamoDBDocumentClient;

/** A table and the client that reaches it: what every data function takes. */
export type TableRef = { readonly client: DocumentClient; readonly tableName: string };

/**
 * One document client per DynamoDBClient (two `from()` calls on one client share their
 * translate config, and the second would silently drop `wrapNumbers`). `wrapNumbers` keeps
 * every number as exact text: ids are int64 and must not pass through a JS number.
 */
export const createDocumentClient = (options: { endpoint?: string | undefined; region?: string | undefined } = {}): DocumentClient => {
  const local = options.endpoint !== undefined;
  const client = new DynamoDBClient({
    ...(local
      ? {
          endpoint: options.endpoint,
          region: options.region ?? 'us-east-1',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        }
      : options.region === undefined
        ? {}
        : { region: options.region }),
    maxAttempts: 3,
    // Fail fast instead of holding a Lambda until its timeout when DynamoDB is unreachable.
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000 },
  });
  // The SDK's logger middleware copies and redacts every response for a logger that is never set:
  // measured by `npm run bench` at ~30% of the list's CPU (README, Performance).
  client.middlewareStack.remove('loggerMiddleware');
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
