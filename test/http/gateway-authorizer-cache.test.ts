import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '../../infra/local/gateway.ts';
import { noContent, testFunction, testRoute } from '../lib/gateway-doubles.ts';

// The local gateway's authorizer cache, with an authorizer whose policy the test chooses.

const read = testRoute('testGet', 'GET', '/test/item');
const remove = testRoute('testDelete', 'DELETE', '/test/item');

describe('the local authorizer cache, as API Gateway caches a TOKEN authorizer result', () => {
  let gateway: Gateway;
  let authorizerCalls = 0;
  beforeAll(async () => {
    gateway = await startGateway({
      port: 0,
      routes: [read, remove],
      functions: new Map([
        [read, testFunction('read', noContent)],
        [remove, testFunction('remove', noContent)],
      ]),
      // Allows only the GET of the request it was asked about (as the method ARN says), for 300 s.
      authorizer: testFunction('authorizer', async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
        authorizerCalls++;
        return {
          principalId: 'test',
          policyDocument: {
            Version: '2012-10-17',
            Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn.replace(/\/[A-Z]+\//, '/GET/') }],
          },
        };
      }),
      authorizerCacheTtlSeconds: 300,
    });
  });
  afterAll(() => gateway.close());

  const call = (method: string, authorization: string) =>
    fetch(`${gateway.url}/test/item`, { method, headers: { Authorization: authorization } }).then((response) => response.status);

  it('evaluates a cached policy against each request: an Allow for GET does not let a DELETE through', async () => {
    const token = 'Bearer get-only-0123456789';
    expect(await call('GET', token)).toBe(204);
    expect(await call('DELETE', token)).toBe(401);
    expect(await call('GET', token)).toBe(204);
    expect(authorizerCalls).toBe(1); // the DELETE and the second GET were judged by the cached policy
  });

  it('asks the authorizer again for each new spelling of the identity source, as API Gateway keys its cache', async () => {
    const before = authorizerCalls;
    expect(await call('GET', 'Bearer spelled-0123456789')).toBe(204);
    expect(await call('GET', 'bearer spelled-0123456789')).toBe(204);
    expect(await call('GET', 'Bearer spelled-0123456789')).toBe(204);
    expect(authorizerCalls).toBe(before + 2);
  });
});
