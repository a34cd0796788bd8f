import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { bearerToken, canBeStageKey, findActiveKey, methodAndPathOf, secondsUntilQuotaReset, wholeApiArn } from './api-keys.ts';
import { functionEnv, readConfig } from '../../shared/config.ts';
import { callDeadline, createDocumentClient } from '../../shared/dynamo.ts';
import { quotaResetContextKey } from '../../shared/errors.ts';
import { dynamoDbFields, dynamoDbRecord, publishDynamoDbMetrics, startDynamoDbRecord } from '../../shared/dynamo-calls.ts';
import { logger, metricsMiddleware, recordAnswer } from '../../shared/observability.ts';
import { routeMatches } from '../../shared/routes.ts';
import { operationRoutes } from './operation-routes.ts';
import { flushDueRefusals, type RefusalReason, recordRefusal } from './refusals.ts';

// Read once per cold start; warm invocations reuse the client's connections.
const config = readConfig(functionEnv({ API_KEYS_TABLE: true, API_KEY_PREFIX: true, DYNAMODB_ENDPOINT: true }));
const apiKeys = { client: createDocumentClient({ endpoint: config.DYNAMODB_ENDPOINT }), tableName: config.API_KEYS_TABLE };

/** The operation a method and full path (`/v1/…`) name, for the log; `unknown` when no route matches. */
const operationAt = (method: string, path: string) =>
  operationRoutes.find((route) => routeMatches(route, method, path))?.operation ?? 'unknown';

/** The refusal API Gateway answers with 401; anything else the function throws becomes a 500 AUTHORIZER_FAILURE. */
const refusal = 'Unauthorized';

/** A refusal, with why: the envelope records it (./refusals.ts) and throws `Unauthorized`. */
class Refused extends Error {
  readonly reason: RefusalReason;
  constructor(reason: RefusalReason) {
    super(refusal);
    this.reason = reason;
  }
}

/** When each invocation began (its refusals are dated so: Lambda dates its Errors at the invocation). */
const invokedAt = new WeakMap<object, number>();

/**
 * Every line of an authorization carries the operation the request is for (from the method
 * ARN; a TOKEN event has no API request id: the access log's `authorizerRequestId` is this
 * invocation's `function_request_id`). A failure that is not a refusal is logged as an error.
 * The line that says how it ended carries the key lookup's DynamoDB call (shared/dynamo-calls.ts).
 */
const authorizationEnvelope: MiddlewareObj<APIGatewayTokenAuthorizerEvent> = {
  before: (request) => {
    invokedAt.set(request, Date.now());
    flushDueRefusals();
    const { method, path } = methodAndPathOf(request.event.methodArn);
    logger.resetKeys();
    logger.appendKeys({ operation: operationAt(method, path) });
    startDynamoDbRecord();
  },
  after: (request) => {
    publishDynamoDbMetrics();
    recordAnswer('authorizer', { refused: false }, invokedAt.get(request));
  },
  // This version's answer: its guard counts Lambda's Errors less these refusals, so both are dated
  // at the invocation's start, as Lambda dates its Errors, and fall in the same period.
  onError: (request) => {
    const at = invokedAt.get(request) ?? Date.now();
    if (request.error instanceof Refused) {
      const { method, path } = methodAndPathOf(request.event.methodArn);
      recordRefusal({ reason: request.error.reason, operation: operationAt(method, path), calls: [...dynamoDbRecord()] }, at);
      // API Gateway answers 401 to exactly this message. Lambda's runtime logs what a handler throws,
      // stack and all ("Invoke Error"): a refusal's is one line, as a refusal has no fault to trace.
      request.error = Object.assign(new Error(refusal), { stack: `Error: ${refusal}` });
      return;
    }
    logger.error('authorizer failed', { error: request.error, ...dynamoDbFields() });
    publishDynamoDbMetrics();
    recordAnswer('authorizer', { refused: false }, at);
  },
};

/**
 * TOKEN authorizer. Allow for a known, unrevoked key, with its usage identifier (which puts the
 * request under its tier's usage plan) and its tier. Anything else throws exactly
 * `Unauthorized`, which API Gateway answers with 401 (a Deny policy would give 403). A
 * DynamoDB failure throws something else, so the gateway answers 500 instead of turning
 * every client away as if its key were bad.
 */
const authorize = async (event: APIGatewayTokenAuthorizerEvent, context: Context): Promise<APIGatewayAuthorizerResult> => {
  const token = bearerToken(event.authorizationToken);
  if (token === undefined) throw new Refused('malformed_header');
  // A token no key of this stage can be costs no lookup.
  if (!canBeStageKey(token, config.API_KEY_PREFIX)) throw new Refused('not_a_key_of_this_stage');
  const key = await findActiveKey(apiKeys, token, callDeadline(context));
  if (key === undefined) throw new Refused('unknown_or_revoked_key');
  logger.info('authorization granted', { key_id: key.keyId, ...dynamoDbFields() });
  return {
    principalId: key.keyId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: wholeApiArn(event.methodArn) }],
    },
    // The quota's reset, for the Retry-After of a QUOTA_EXCEEDED answer (shared/errors.ts, authorizerContextHeaders).
    context: {
      keyId: key.keyId,
      keyName: key.name,
      ...(key.tier === undefined ? {} : { tier: key.tier }),
      [quotaResetContextKey]: secondsUntilQuotaReset(),
    },
    // The usage plan's API key (apiKeySource AUTHORIZER): a value of its own, never the bearer key.
    // A key issued before usage plans has none, and API Gateway refuses it (INVALID_API_KEY → 401).
    ...(key.usageKey === undefined ? {} : { usageIdentifierKey: key.usageKey }),
  };
};

export const handler = middy<APIGatewayTokenAuthorizerEvent, APIGatewayAuthorizerResult>()
  // Never the event, whatever POWERTOOLS_LOGGER_LOG_EVENT says: its authorizationToken is the API key.
  .use(injectLambdaContext(logger, { logEvent: false }))
  .use(metricsMiddleware())
  .use(authorizationEnvelope)
  .handler(authorize);
