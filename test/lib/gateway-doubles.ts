import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import type { LocalFunction } from '../../infra/local/gateway.ts';
import type { LambdaHandler } from '../../infra/local/lambda-runtime.ts';
import type { Route } from '../../shared/routes.ts';

// Stand-ins for the functions behind the local gateway, for tests about the gateway itself.

/** A function as the gateway runs it, with settings that never matter to these tests. */
export const testFunction = <Handler>(name: string, handler: Handler): LocalFunction<Handler> => ({
  name,
  handler,
  memorySize: 128,
  timeoutSeconds: 30,
});

/** A function that reads nothing and answers 204. */
export const noContent = (async () => ({ statusCode: 204 })) as LambdaHandler;

/** A buffered route of the test's own. */
export const testRoute = (operation: string, method: Route['method'], path: string): Route => ({
  operation,
  method,
  path,
  streaming: false,
  summary: 'test-only',
  stability: 'experimental',
});

/** An authorizer result allowing every method of every resource. */
export const allowEverything: APIGatewayAuthorizerResult = {
  principalId: 'test',
  policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: '*' }] },
};
