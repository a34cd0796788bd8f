import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { functionLogGroups } from './metrics.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';

/** Saved Logs Insights queries (CloudWatch → Logs Insights → Saved queries → "<prefix>/…"). */
export function addSavedQueries(scope: Construct, props: StoreOrdersMonitoringProps, prefix: string) {
  const { accessLogs, authorizer } = props;
  const functionLogs = functionLogGroups(props);
  const query = (queryId: string, logGroups: logs.ILogGroup[], queryString: logs.QueryString) =>
    new logs.QueryDefinition(scope, `Query-${queryId}`, { queryDefinitionName: `${prefix}/${queryId}`, logGroups, queryString });
  query(
    'errors',
    functionLogs,
    new logs.QueryString({
      fields: ['@timestamp', 'level', 'operation', 'request_id', 'order_id', 'outcome', 'statusCode', 'message', 'error.message'],
      filterStatements: ["level in ['ERROR', 'WARN']"],
      sort: '@timestamp desc',
      limit: 100,
    }),
  );
  query(
    'request-by-id',
    [...functionLogs, accessLogs],
    new logs.QueryString({
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
    }),
  );
  query(
    'gateway-errors',
    [accessLogs],
    new logs.QueryString({
      filterStatements: ['status >= 400'],
      statsStatements: ['count(*) as requests by status, errorResponseType, authorizerError, integrationError'],
      sort: 'requests desc',
    }),
  );
  // Who is being limited: throttled and quota-refused requests by key id (principalId, never the key).
  query(
    'limited-keys',
    [accessLogs],
    new logs.QueryString({
      filterStatements: ["errorResponseType in ['THROTTLED', 'QUOTA_EXCEEDED']"],
      statsStatements: ['count(*) as refused by principalId, errorResponseType, httpMethod, resourcePath'],
      sort: 'refused desc',
    }),
  );
  query(
    'slowest-requests',
    [accessLogs],
    new logs.QueryString({
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
    }),
  );
  // The requests whose slowest DynamoDB call was slowest (shared/dynamo-calls.ts), with what they spent in DynamoDB in all.
  query(
    'slowest-dynamodb-calls',
    functionLogs,
    new logs.QueryString({
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
    }),
  );
  query(
    'auth-refusals',
    [authorizer.logGroup],
    new logs.QueryString({
      filterStatements: ["message = 'authorization refused'"],
      statsStatements: ['count(*) as refusals by reason, operation, bin(5m)'],
    }),
  );
  query(
    'cold-starts-and-memory',
    functionLogs,
    new logs.QueryString({
      filterStatements: ["@type = 'REPORT'"],
      statsStatements: [
        'count(*) as invocations, sum(ispresent(@initDuration)) as coldStarts, pct(@duration, 99) as p99DurationMs, max(@maxMemoryUsed / 1000 / 1000) as maxMemoryMB by @log',
      ],
    }),
  );
}
