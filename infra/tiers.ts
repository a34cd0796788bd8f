/**
 * The per-key limit tiers and the checks every stage's tiers must pass: what infra/stage-config.ts
 * sets for each stage, the stack's usage plans, the key tool and the local gateway's limits read.
 */
/** API Gateway throttling: steady requests per second and burst. Beyond it: 429 too_many_requests. */
export type Throttling = { readonly rateLimit: number; readonly burstLimit: number };

/**
 * The limit tiers a key can be in. Each deployed stage defines every tier (an API Gateway usage
 * plan per tier, `store-orders-<stage>-<tier>`); the key tool gives a key one at creation.
 */
export const tierNames = ['standard', 'high', 'canary'] as const;
export type TierName = (typeof tierNames)[number];

/**
 * One tier's limits for each key in it (API Gateway: usage plan throttle, per-method throttle
 * and quota). They apply on top of the stage's throttling, which stays the ceiling of all keys
 * together. AWS applies them on a best-effort basis: they are targets, not a hard cap.
 */
export type Tier = {
  /** Requests per second and burst of one key, over every operation. */
  readonly throttling: Throttling;
  /** The list's own limit per key (each list is a full-table Scan), below the key's overall one. */
  readonly listThrottling: Throttling;
  /** The v2 page's own limit per key (each page is a Scan or Query of up to 1,000 orders), below the key's overall one. */
  readonly pagedListThrottling: Throttling;
  /** Requests one key may make per UTC day, over every operation. */
  readonly dailyQuota: number;
  /**
   * Lists of one key running at once (a lease per running list in the list-leases table), at
   * most the stage's listReservedConcurrency: one key cannot take every list slot. Beyond it:
   * 429 too_many_requests with Retry-After.
   */
  readonly concurrentLists: number;
};

/**
 * The operations whose method has a limit of its own besides the key's and the stage's overall
 * one (their contract's `throttling` class), by the field of a tier and of a stage
 * that holds it: API Gateway's per-method throttle, a usage plan's per-method throttle, the local
 * gateway's second token bucket.
 */
export const methodLimitFields = { list: 'listThrottling', pagedList: 'pagedListThrottling' } as const;
export type MethodLimitClass = keyof typeof methodLimitFields;

/** The local run's developer tier: no limits at all, so `npm run load` and `npm run bench` measure the service. */
export const unlimitedTier = 'unlimited';
export type LocalTierName = TierName | typeof unlimitedTier;

/** What the per-key bound on lists is checked against: a stage's tiers and its list slots. */
type ListSlots = {
  readonly tiers: Readonly<Record<string, Tier | typeof unlimitedTier>>;
  readonly listReservedConcurrency: number;
};

/**
 * What the tiers must respect, checked once when a stack is built: each tier's limits within the
 * stage's (the stage throttle is the ceiling of every key together, so one key above it is a
 * typo), the list's within its key's overall limit, and a default tier that exists.
 */
export const tierProblems = (config: {
  readonly tiers: Readonly<Record<string, Tier>>;
  readonly listReservedConcurrency: number;
  readonly defaultTier: string;
  readonly throttling: Throttling;
  readonly listThrottling: Throttling;
  readonly pagedListThrottling: Throttling;
}): string[] => {
  const problems: string[] = [];
  const within = (what: string, inner: Throttling, outer: Throttling, outerName: string) => {
    if (inner.rateLimit > outer.rateLimit || inner.burstLimit > outer.burstLimit)
      problems.push(
        `${what} (${inner.rateLimit}/s, burst ${inner.burstLimit}) exceeds ${outerName} (${outer.rateLimit}/s, burst ${outer.burstLimit})`,
      );
    if (inner.rateLimit <= 0 || !Number.isInteger(inner.burstLimit) || inner.burstLimit < 1)
      problems.push(`${what} needs a positive rate and a whole burst of at least 1`);
  };
  for (const [name, tier] of Object.entries(config.tiers)) {
    within(`tier ${name}`, tier.throttling, config.throttling, 'the stage throttling');
    for (const [limit, field] of Object.entries(methodLimitFields)) {
      within(`tier ${name}'s ${limit}`, tier[field], tier.throttling, `tier ${name}'s own`);
      within(`tier ${name}'s ${limit}`, tier[field], config[field], `the stage's ${limit} throttling`);
    }
    if (!Number.isInteger(tier.dailyQuota) || tier.dailyQuota < 1)
      problems.push(`tier ${name}'s daily quota must be a whole number of at least 1`);
  }
  problems.push(...listSlotProblems(config));
  if (!(config.defaultTier in config.tiers)) problems.push(`the default tier ${config.defaultTier} is not one of the tiers`);
  return problems;
};

/**
 * What the per-key bound on lists must leave of the stage's list slots, deployed and local alike:
 * each tier's concurrentLists from 1 to one less than listReservedConcurrency, so that a key
 * running all the lists its tier allows leaves a slot for another key. The local developer's
 * `unlimited` tier has no per-key bound.
 */
export const listSlotProblems = (config: ListSlots): string[] =>
  Object.entries(config.tiers).flatMap(([name, tier]) =>
    tier === unlimitedTier ||
    (Number.isInteger(tier.concurrentLists) && tier.concurrentLists >= 1 && tier.concurrentLists < config.listReservedConcurrency)
      ? []
      : [
          `tier ${name}'s concurrent lists must be a whole number from 1 to one less than the stage's list concurrency (${config.listReservedConcurrency}), so that another key's list still has a slot`,
        ],
  );

/** The evaluation windows AWS WAF's rate-based rules take (seconds). */
export type FirewallWindow = 60 | 120 | 300 | 600;

/**
 * The busiest a key may be: of a stage's tiers, the highest steady rate and the highest burst. One
 * client address is held to this by the stage's firewall (AWS WAF deployed, the local gateway
 * locally), whatever keys it sends or makes up (docs/decisions/0931-a-web-acl-in-front-of-each-stage.md).
 */
export const busiestKey = (tiers: Readonly<Record<string, Tier>>): Throttling => ({
  rateLimit: Math.max(...Object.values(tiers).map((tier) => tier.throttling.rateLimit)),
  burstLimit: Math.max(...Object.values(tiers).map((tier) => tier.throttling.burstLimit)),
});

/**
 * Requests one source address may make in a rate-based rule's evaluation window before AWS WAF
 * blocks it: what the busiest key may do in that window, its steady rate throughout and its burst
 * on top, rounded up. A client holding one key, of any tier, never reaches it; an address above it
 * is a flood, or many keys behind one address (NAT), for which the stage raises its limit.
 * AWS WAF takes limits from 10 to 2,000,000,000.
 */
export const requestsPerAddress = (tiers: Readonly<Record<string, Tier>>, windowSeconds: FirewallWindow): number => {
  const busiest = busiestKey(tiers);
  const limit = Math.ceil(busiest.rateLimit * windowSeconds + busiest.burstLimit);
  if (limit < 10 || limit > 2_000_000_000) throw new Error(`a rate-based rule limit must be 10 to 2,000,000,000, not ${limit}`);
  return limit;
};
