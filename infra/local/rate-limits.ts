/**
 * The local gateway's stand-in for API Gateway usage plans: per key (its usage identifier), the
 * limits of its tier, from the same stage config the stack builds its plans from. A token bucket
 * per key (rate and burst) over every operation, a second one per list or page operation (its own
 * limit: its contract's `throttling`), and a count per UTC day against the daily quota. The
 * developer's `unlimited` tier has none.
 */
import type { Route } from '../../shared/routes.ts';
import type { LimitClass } from '../function-contract.ts';
import { methodLimitFields, type Throttling, type Tier, type unlimitedTier } from '../tiers.ts';

export type LocalLimits = {
  readonly tiers: Readonly<Record<string, Tier | typeof unlimitedTier>>;
  /** The tier of a key whose record names none (issued before tiers) or names one not defined here. */
  readonly defaultTier: string;
};

/** How API Gateway refuses a request over its key's limits (its gateway response types). */
export type LimitRefusal = 'THROTTLED' | 'QUOTA_EXCEEDED';

class TokenBucket {
  private tokens: number;
  private updated: number;
  private readonly limits: Throttling;
  constructor(limits: Throttling, now: number) {
    this.limits = limits;
    this.tokens = limits.burstLimit;
    this.updated = now;
  }
  /** Whether a token is there now (refilled at the rate, up to the burst). */
  ready(now: number): boolean {
    this.tokens = Math.min(this.limits.burstLimit, this.tokens + ((now - this.updated) / 1000) * this.limits.rateLimit);
    this.updated = now;
    return this.tokens >= 1;
  }
  take() {
    this.tokens -= 1;
  }
}

/**
 * `limitClasses`: each operation's limit class (its contract's `throttling`); an operation not
 * named (a test-only route) has only the key's overall limit.
 */
export const createRateLimiter = (
  limits: LocalLimits,
  limitClasses: ReadonlyMap<string, LimitClass> = new Map(),
  clock: () => number = Date.now,
) => {
  const buckets = new Map<string, TokenBucket>();
  const quotas = new Map<string, number>();
  const bucket = (id: string, throttling: Throttling, now: number) => {
    let found = buckets.get(id);
    if (found === undefined) buckets.set(id, (found = new TokenBucket(throttling, now)));
    return found;
  };
  return {
    /**
     * Counts a request of the key with this usage identifier and tier (the authorizer's), or says
     * why it is refused. A refused request takes nothing from any limit. Limits are per tier as
     * well as per key: a moved key starts afresh in its new tier, as in its new usage plan.
     */
    admit(usageKey: string, tierName: string | undefined, route: Route): LimitRefusal | undefined {
      // Own properties only: a tier name read from a record must not reach Object.prototype.
      const name = tierName !== undefined && Object.hasOwn(limits.tiers, tierName) ? tierName : limits.defaultTier;
      const tier = limits.tiers[name];
      if (tier === undefined || tier === 'unlimited') return undefined;
      const now = clock();
      const id = `${name}/${usageKey}`;
      const day = `${id}/${new Date(now).toISOString().slice(0, 10)}`;
      const used = quotas.get(day) ?? 0;
      if (used >= tier.dailyQuota) return 'QUOTA_EXCEEDED';
      const needed = [bucket(id, tier.throttling, now)];
      // A list or page operation also has a limit of its own, as in the stack's usage plans.
      const limitClass = limitClasses.get(route.operation) ?? 'request';
      if (limitClass !== 'request') needed.push(bucket(`${id}/${route.operation}`, tier[methodLimitFields[limitClass]], now));
      // Every bucket is refilled and checked before any token is taken.
      if (!needed.map((candidate) => candidate.ready(now)).every(Boolean)) return 'THROTTLED';
      for (const taken of needed) taken.take();
      quotas.set(day, used + 1);
      return undefined;
    },
  };
};

export type RateLimiter = ReturnType<typeof createRateLimiter>;
