/**
 * The local gateway's TOKEN authorizer cache, as API Gateway's behaves (docs/developing.md,
 * "Small decisions"): keyed by the identity source's value
 * (the `Authorization` header exactly as sent), holding the authorizer's whole result, whose
 * policy is evaluated against each request's method ARN. Entries expire after the TTL and are
 * removed; the number held is bounded, the oldest going first.
 */
import type { APIGatewayAuthorizerResult } from 'aws-lambda';

/** `arn:…/stage/*\/*` style wildcards, as API Gateway evaluates a policy's Resource. */
const arnMatches = (pattern: string, arn: string) =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  ).test(arn);

/** Whether the authorizer's policy lets the request with this method ARN through: an Allow matches it and no Deny does. */
export const policyAllows = (result: APIGatewayAuthorizerResult, methodArn: string): boolean => {
  const matching = result.policyDocument.Statement.filter(
    (statement) => 'Resource' in statement && [statement.Resource ?? []].flat().some((resource) => arnMatches(resource, methodArn)),
  );
  return matching.some((statement) => statement.Effect === 'Allow') && !matching.some((statement) => statement.Effect === 'Deny');
};

/**
 * At most this many results are held. API Gateway documents no size for its authorizer cache;
 * locally each entry is a few hundred bytes, so the bound keeps a client that sends endless
 * spellings of a header (each its own key, as on AWS) to a few megabytes.
 */
export const authorizerCacheMaxEntries = 10_000;

export type AuthorizerCache = {
  /** The cached result for this identity source value, undefined when none or expired (an expired one is removed). */
  get(identity: string): APIGatewayAuthorizerResult | undefined;
  set(identity: string, result: APIGatewayAuthorizerResult): void;
  readonly size: number;
};

export const createAuthorizerCache = (options: {
  readonly ttlSeconds: number;
  readonly maxEntries?: number;
  readonly now?: () => number;
}): AuthorizerCache => {
  const { ttlSeconds, maxEntries = authorizerCacheMaxEntries, now = Date.now } = options;
  // Insertion order is expiry order (one TTL for all): the oldest entries are always first.
  const entries = new Map<string, { expires: number; result: APIGatewayAuthorizerResult }>();
  const removeExpired = () => {
    for (const [identity, entry] of entries) {
      if (entry.expires > now()) break;
      entries.delete(identity);
    }
  };
  return {
    get: (identity) => {
      removeExpired();
      return entries.get(identity)?.result;
    },
    set: (identity, result) => {
      if (ttlSeconds <= 0) return;
      removeExpired();
      entries.delete(identity);
      entries.set(identity, { expires: now() + ttlSeconds * 1000, result });
      for (const oldest of entries.keys()) {
        if (entries.size <= maxEntries) break;
        entries.delete(oldest);
      }
    },
    get size() {
      return entries.size;
    },
  };
};
