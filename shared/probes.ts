/**
 * What the service's own probes (the synthetic client, functions/canary/handler.ts, and the pre-traffic
 * hook, functions/pre-traffic-hook/handler.ts) and the functions they probe agree on: the probes' key tier,
 * how much of a v1 list a probe is answered, and the order ids reserved for the probes' own orders
 * (docs/api.md#orders-the-service-keeps-for-its-own-checks: a contract with the store's other
 * systems). No dependency: the functions import this.
 */

/**
 * How the pre-traffic hook's events name their request (`requestContext.requestId`, which API
 * Gateway sets itself for every client's request, as a UUID): the functions record no per-version
 * answer for them (shared/http.ts), since the hook judges those answers itself and the guards judge
 * what a new version does for clients.
 */
export const hookRequestIdPrefix = 'pre-traffic-';

/** The tier of the probes' key (npm run keys -- canary): limits of its own, so no probe takes a client's share. */
export const canaryTier = 'canary';

/**
 * Of a v1 list asked for with a key of the canary tier, the function writes the Scan pages until
 * their JSON reaches this many bytes, then closes the array and ends: a probe reads a bounded part of
 * the list to its end, so that no probe ever leaves a list, whose cost would depend on how AWS treats
 * a client that left (docs/decisions/0169-the-probes-own-orders.md).
 */
export const probeListBytes = 256 * 1024;

/**
 * The Scan page (items per request) of a probe's list, at most: its 256 KB (about 2,500 orders) then
 * reach a second page of every segment once a segment holds more than this, so a release whose
 * paging is broken (a page repeated: the probes check each id is listed once) shows within the bound.
 */
export const probeScanPageSize = 100;

/**
 * The most a probe reads of a list before it stops: the bound, one more Scan page (DynamoDB pages
 * hold at most 1 MB of items, whose JSON is somewhat larger) and the closing bracket. An answer
 * still going past it comes from a version that does not bound a probe's list.
 */
export const probeListReadCapBytes = probeListBytes + 2 * 1024 * 1024;

/**
 * The ids reserved for the probes' own orders: the 100 ids -9223372036854775799 to
 * -9223372036854775700, the text `-92233720368547757` and two digits. The probes' roles name
 * each exactly (infra/cdk/probe-access.ts). int64's minimum, -9223372036854775808, is reserved as
 * well: it is never an order (the checks cancel it to see 404 order_not_found).
 */
export const probeOrderIdPrefix = '-92233720368547757';
export const probeOrderSlots = 100;

/** Every attribute a probe order has or a probe reads (shared/probe-writes.ts): the probes' roles allow no other (`dynamodb:Attributes`). */
export const probeOrderAttributes = ['id', 'status', 'cancelledAt', 'probe', 'probeExpiresAt'] as const;

/** The id of probe slot `slot` (0 to 99). */
export const probeOrderId = (slot: number): string => {
  if (!Number.isInteger(slot) || slot < 0 || slot >= probeOrderSlots) throw new RangeError(`probe slot ${slot} is not 0 to 99`);
  return `${probeOrderIdPrefix}${String(slot).padStart(2, '0')}`;
};

/** Whether an order id (canonical decimal text) is a probe's: such an order is never listed to a client. */
export const isProbeOrderId = (id: string): boolean => id.length === probeOrderIdPrefix.length + 2 && id.startsWith(probeOrderIdPrefix);

/** The synthetic client's run timeout in seconds (its stack sets it; its probe order is free again after it). */
export const canaryTimeoutSeconds = 55;

/** The probe slots: the synthetic client's one (its runs never overlap), and the pre-traffic hooks' (several deployments at once). */
export const probeSlots = { syntheticClient: [0], preTrafficHook: Array.from({ length: probeOrderSlots - 1 }, (_, i) => i + 1) } as const;

/**
 * The most probe orders DynamoDB's item count (refreshed about every six hours) can hold: the
 * synthetic client's, one per deployment group's hook (four functions) and leftovers of runs that
 * crashed, until they expire. A list of [] beside a larger count is wrong.
 */
export const probeOrdersCountedAtMost = 10;

/** int64's minimum: never an order. */
export const idThatCannotExist = '-9223372036854775808';

/**
 * The alias every function's clients reach (API Gateway's integrations) and CodeDeploy moves
 * (infra/cdk/store-function.ts): the pre-traffic hook compares a busy new version with the version
 * it points at.
 */
export const liveAliasName = 'live';
