import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { functionLogGroups } from './metrics.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';

/** Saved Logs Insights queries (CloudWatch → Logs Insights → Saved queries → "<prefix>/…"). */
export function addSavedQueries(scope: Construct, props: StoreOrdersMonitoringProps, prefix: string) {
  for (const { id, logGroups, query } of savedQueries(props))
    new logs.QueryDefinition(scope, `Query-${id}`, {
      queryDefinitionName: `${prefix}/${id}`,
      logGroups,
      queryString: new logs.QueryString(query),
    });
}

/** Each saved query by name (`<prefix>/<id>`), with the log groups it reads. */
const savedQueries = (props: StoreOrdersMonitoringProps) => {
  const { accessLogs, authorizer } = props;
  const functionLogs = functionLogGroups(props);
  return [
    { id: 'errors', logGroups: functionLogs, query: errorLines },
    { id: 'request-by-id', logGroups: [...functionLogs, accessLogs], query: requestById },
    { id: 'gateway-errors', logGroups: [accessLogs], query: gatewayErrors },
    { id: 'limited-keys', logGroups: [accessLogs], query: limitedKeys },
    { id: 'slowest-requests', logGroups: [accessLogs], query: slowestRequests },
    { id: 'slowest-dynamodb-calls', logGroups: functionLogs, query: slowestDynamoDbCalls },
    { id: 'auth-refusals', logGroups: [authorizer.logGroup], query: authRefusals },
    { id: 'cold-starts-and-memory', logGroups: functionLogs, query: coldStartsAndMemory },
  ];
};

const errorLines: logs.QueryStringProps = {
  fields: ['@timestamp', 'level', 'operation', 'request_id', 'order_id', 'outcome', 'statusCode', 'message', 'error.message'],
  filterStatements: ["level in ['ERROR', 'WARN']"],
  sort: '@timestamp desc',
  limit: 100,
};

const requestById: logs.QueryStringProps = {
  fields: [
    '@timestamp',
    '@log',
    'level',
    'message',
    'outcome',
    'status',
    'statusCode',
    'latencyMs',
    'responseLatency',
    'authorizerRequestId',
    'integrationRequestId',
  ],
  // Paste the X-Request-Id a client quotes. The authorizer's lines have no API request id:
  // search its log for `function_request_id` = the access log's authorizerRequestId.
  filterStatements: ["request_id = 'PASTE-X-REQUEST-ID' or requestId = 'PASTE-X-REQUEST-ID'"],
  sort: '@timestamp asc',
};

const gatewayErrors: logs.QueryStringProps = {
  filterStatements: ['status >= 400'],
  statsStatements: ['count(*) as requests by status, errorResponseType, authorizerError, integrationError'],
  sort: 'requests desc',
};

// Who is being limited: throttled and quota-refused requests by key id (principalId, never the key).
const limitedKeys: logs.QueryStringProps = {
  filterStatements: ["errorResponseType in ['THROTTLED', 'QUOTA_EXCEEDED']"],
  statsStatements: ['count(*) as refused by principalId, errorResponseType, httpMethod, resourcePath'],
  sort: 'refused desc',
};

const slowestRequests: logs.QueryStringProps = {
  fields: [
    '@timestamp',
    'requestId',
    'httpMethod',
    'path',
    'status',
    'responseLatency',
    'responseTransferMode',
    'timeToFirstContent',
    'integrationLatency',
    'authorizerLatency',
  ],
  // A streamed list lasts as long as its transfer: compare its time to first content instead.
  sort: 'responseLatency desc',
  limit: 50,
};

// The requests whose slowest DynamoDB call was slowest (shared/dynamo-calls.ts), with what they spent in DynamoDB in all.
const slowestDynamoDbCalls: logs.QueryStringProps = {
  fields: [
    '@timestamp',
    'operation',
    'request_id',
    'dynamoDbSlowestOperation',
    'dynamoDbSlowestMs',
    'dynamoDbCalls',
    'dynamoDbMs',
    'dynamoDbThrottled',
    'dynamoDbCapacity',
    'latencyMs',
  ],
  filterStatements: ['ispresent(dynamoDbSlowestMs)'],
  sort: 'dynamoDbSlowestMs desc',
  limit: 50,
};

// A refusal line counts the refusals of its cause since the previous one (functions/authorizer/refusals.ts).
const authRefusals: logs.QueryStringProps = {
  filterStatements: ["message = 'authorization refused'"],
  statsStatements: ['sum(refusals) as refused by reason, operation, bin(5m)'],
};

const coldStartsAndMemory: logs.QueryStringProps = {
  filterStatements: ["@type = 'REPORT'"],
  statsStatements: [
    'count(*) as invocations, sum(ispresent(@initDuration)) as coldStarts, pct(@duration, 99) as p99DurationMs, max(@maxMemoryUsed / 1000 / 1000) as maxMemoryMB by @log',
  ],
};
