import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { authorizerCacheMaxEntries, createAuthorizerCache, policyAllows } from '../../infra/local/authorizer-cache.ts';

const arn = (method: string, path: string) => `arn:aws:execute-api:local:000000000000:local-api/local/${method}${path}`;
const policy = (...statements: { Effect: 'Allow' | 'Deny'; Resource: string | string[] }[]): APIGatewayAuthorizerResult => ({
  principalId: 'test',
  policyDocument: { Version: '2012-10-17', Statement: statements.map((statement) => ({ Action: 'execute-api:Invoke', ...statement })) },
});

describe('policyAllows', () => {
  it('evaluates the policy against the method ARN of the request at hand', () => {
    const getOnly = policy({ Effect: 'Allow', Resource: arn('GET', '/store/orders') });
    expect(policyAllows(getOnly, arn('GET', '/store/orders'))).toBe(true);
    expect(policyAllows(getOnly, arn('DELETE', '/store/orders/1'))).toBe(false);
  });

  it('reads * in a Resource as any characters, and lets a matching Deny win over an Allow', () => {
    const everything = policy({ Effect: 'Allow', Resource: 'arn:aws:execute-api:local:000000000000:local-api/local/*/*' });
    expect(policyAllows(everything, arn('DELETE', '/store/orders/1'))).toBe(true);
    const butDelete = policy(
      { Effect: 'Allow', Resource: ['arn:aws:execute-api:local:000000000000:local-api/local/*'] },
      { Effect: 'Deny', Resource: arn('DELETE', '/store/orders/*') },
    );
    expect(policyAllows(butDelete, arn('GET', '/store/orders'))).toBe(true);
    expect(policyAllows(butDelete, arn('DELETE', '/store/orders/1'))).toBe(false);
  });
});

describe('the local authorizer cache', () => {
  const allow = policy({ Effect: 'Allow', Resource: '*' });

  it('keys results by the identity source value exactly as sent: another spelling of a header is another entry', () => {
    const cache = createAuthorizerCache({ ttlSeconds: 300 });
    cache.set('Bearer key-0123456789abcdef', allow);
    expect(cache.get('Bearer key-0123456789abcdef')).toBe(allow);
    expect(cache.get('bearer key-0123456789abcdef')).toBeUndefined();
    expect(cache.get('Bearer  key-0123456789abcdef')).toBeUndefined();
  });

  it('removes an entry once its TTL has passed, whether or not it is asked for again', () => {
    let now = 1_000_000;
    const cache = createAuthorizerCache({ ttlSeconds: 300, now: () => now });
    cache.set('Bearer a-0123456789abcdef', allow);
    now += 299_999;
    expect(cache.get('Bearer a-0123456789abcdef')).toBe(allow);
    now += 1;
    cache.set('Bearer b-0123456789abcdef', allow); // any use of the cache drops what has expired
    expect(cache.size).toBe(1);
    expect(cache.get('Bearer a-0123456789abcdef')).toBeUndefined();
    now += 300_000;
    expect(cache.get('Bearer b-0123456789abcdef')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('holds at most its bound of entries, dropping the oldest first', () => {
    const cache = createAuthorizerCache({ ttlSeconds: 300 });
    for (let i = 0; i < authorizerCacheMaxEntries + 3_000; i++) cache.set(`Bearer spelling-${i}`, allow);
    expect(cache.size).toBe(authorizerCacheMaxEntries);
    expect(cache.get('Bearer spelling-0')).toBeUndefined();
    expect(cache.get(`Bearer spelling-${authorizerCacheMaxEntries + 2_999}`)).toBe(allow);
  });

  it('holds nothing with a TTL of 0 (caching off)', () => {
    const cache = createAuthorizerCache({ ttlSeconds: 0 });
    cache.set('Bearer a-0123456789abcdef', allow);
    expect(cache.size).toBe(0);
  });
});
