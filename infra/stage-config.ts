/**
 * Everything that differs between the deployed stages, in one typed place. The CDK app, the
 * key tool and the docs read it; nothing else branches on the stage name.
 */
// Type-only: the key tool imports this module and must not pay for loading aws-cdk-lib.
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { stackName } from './names.ts';
import { busiestKey, type FirewallWindow, type LocalTierName, type Throttling, type Tier, type TierName, unlimitedTier } from './tiers.ts';

export type StageName = 'staging' | 'production';

/**
 * What a function's settings depend on, for the deployed stages and the local run alike
 * (infra/function-settings.ts builds each function's environment from it).
 */
export type FunctionStage = {
  readonly stage: StageName | 'local';
  /**
   * Parallel Scan segments of listOrders (SCAN_SEGMENTS): the count that is fastest where the
   * list runs. DynamoDB serves segments from separate partitions; DynamoDB Local, on the same
   * cores as everything else, gains nothing from them and starves writes (docs/operating.md#reliability).
   */
  readonly scanSegments: number;
  /**
   * At most this many lists run at once (all keys together): the list function's reserved
   * concurrency on AWS, the local gateway's limit on the same function locally. A list beyond it
   * is refused at once, before the function runs, with what API Gateway answers for a throttled
   * function (503 service_unavailable, Retry-After). The rest of the capacity stays for cancels.
   */
  readonly listReservedConcurrency: number;
  /**
   * At most this many v2 pages run at once (all keys together): the v2 function's reserved
   * concurrency, the local gateway's limit likewise. Each page is a Scan or Query of up to 1,000
   * orders; beyond it a page is refused at once as a throttled function is, so pages cannot take
   * the concurrency cancels need.
   */
  readonly pagedListReservedConcurrency: number;
  /**
   * A list whose client has taken nothing of its answer for this long is cut: the scan stops and
   * its slots are freed (LIST_STALL_SECONDS; docs/operating.md#reliability).
   */
  readonly listStallSeconds: number;
  /** Per-key limits by tier; the function reads each tier's concurrentLists. */
  readonly tiers: Readonly<Record<string, Tier | typeof unlimitedTier>>;
  /** The tier of a key whose record names none (issued before tiers) or names one not defined here. */
  readonly defaultTier: string;
  /** POWERTOOLS_LOG_LEVEL of the functions. */
  readonly logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** API Gateway caches an Allow per key this long, so a revoked key keeps working for up to this long. */
  readonly authorizerCacheTtlSeconds: number;
  /** Keys of this stage start with it, so a leaked key is recognisable (see docs). */
  readonly keyPrefix: string;
  /**
   * Whether every key of the stage is one the key tool issued: its prefix, then 43 base64url
   * characters. Then API Gateway refuses any other bearer token itself and the authorizer refuses it
   * without a lookup (docs/decisions/0931-a-web-acl-in-front-of-each-stage.md). The local
   * run's STORE_API_KEY may be any bearer token of 16 characters or more.
   */
  readonly onlyIssuedKeys: boolean;
};

/**
 * How CodeDeploy moves each function's `live` alias to a new version: at once, or 10% first
 * (canary) or 10% more every few minutes (linear), watching the guard alarms and rolling back
 * when one goes off. The names are CodeDeploy's predefined configurations (`CodeDeployDefault.…`).
 */
export type DeploymentStrategy =
  | 'LambdaAllAtOnce'
  | 'LambdaCanary10Percent5Minutes'
  | 'LambdaCanary10Percent10Minutes'
  | 'LambdaCanary10Percent15Minutes'
  | 'LambdaCanary10Percent30Minutes'
  | 'LambdaLinear10PercentEvery1Minute'
  | 'LambdaLinear10PercentEvery2Minutes'
  | 'LambdaLinear10PercentEvery3Minutes'
  | 'LambdaLinear10PercentEvery10Minutes';

export type StageConfig = Omit<FunctionStage, 'stage' | 'tiers' | 'defaultTier'> & {
  readonly stage: StageName;
  readonly stackName: string;
  /** Fixed names: the orders table is a contract with the store's other systems, which write to it. */
  readonly ordersTableName: string;
  readonly apiKeysTableName: string;
  /** Stage-wide API Gateway throttling: steady requests per second and burst. Beyond it: 429 too_many_requests. */
  readonly throttling: Throttling;
  /**
   * The list's own throttle, below the stage's: each list is a full-table Scan, so one client
   * looping on it must not take the table's capacity and the functions' concurrency from cancels.
   */
  readonly listThrottling: Throttling;
  /** The v2 page's own throttle, below the stage's: a client paging fast must not take the capacity cancels need. */
  readonly pagedListThrottling: Throttling;
  /**
   * Reserved concurrency of the list function (see FunctionStage): the rest of the account's
   * concurrency stays for cancel and the authorizer (which reserve none, so they are not
   * capped). Needs an account concurrency quota of at least this, the v2 page's and 100.
   */
  readonly listReservedConcurrency: number;
  /** Per-key limits by tier, and the tier of a key created without `--tier`. */
  readonly tiers: Readonly<Record<TierName, Tier>>;
  readonly defaultTier: TierName;
  /**
   * Whether every method requires the key's usage identifier, i.e. whether the tiers' limits
   * apply. `false` only for the one deploy that brings usage plans to a stage whose clients hold
   * keys from before them: deploy, `npm run keys -- adopt`, then `true` and deploy again
   * (docs/operating.md#keys-and-limit-tiers); otherwise those keys are refused (401) until adopted.
   */
  readonly requireUsageKey: boolean;
  /** How a deploy shifts traffic to the new version of each function. */
  readonly deployment: DeploymentStrategy;
  /** Whether the console's "Test" button may invoke the functions (an extra permission per route). */
  readonly consoleTestInvoke: boolean;
  /** Retention of every log group of the stage (functions, API access and execution logs). */
  readonly logRetentionDays: RetentionDays;
  /** Whether a deleted stack takes its log groups along (`destroy`) or leaves them (`retain`). */
  readonly logRemovalPolicy: 'destroy' | 'retain';
  /**
   * Both tables' deletion protection (DynamoDB refuses to delete a protected table, whoever asks).
   * Every stage keeps its tables when the stack goes or a change would replace them, and removes
   * them only when the deploy that created them fails (infra/cdk/tables.ts): there is no setting
   * that lets CloudFormation delete order data.
   */
  readonly data: { readonly deletionProtection: boolean };
  /**
   * Whether the orders table has the v2 status filter's index (infra/cdk/stage-status-index.ts). Adding it
   * to a table that holds orders must be a deploy of its own: `false` for the release that brings v2
   * (filtered pages answer 503 until the index is ACTIVE), then `true` alone (docs/reference/stages.md#the-status-index).
   */
  readonly ordersStatusIndex: boolean;
  /**
   * Whether the synthetic client and the pipeline's smoke check ask for a filtered v2 page
   * (`?status=pending`). Until the status index is ACTIVE such a page answers 503, which would
   * fail the canary every minute (a guard alarm of every deployment) and count as the API's
   * 5xx: `true` only in a deploy of its own once the index is ACTIVE (docs/reference/stages.md#the-status-index).
   */
  readonly statusFilterChecks: boolean;
  readonly alarms: {
    /** Subscribed to the stage's paging topic when set (the address must confirm the subscription). */
    readonly email?: string;
    /** Subscribed to the stage's ticket topic when set: tickets are for the next working day, not for on-call. */
    readonly ticketEmail?: string;
    /** API answers with status 5xx, as a percentage of all requests in 5 minutes. */
    readonly serverErrorRatePercent: number;
    /**
     * The 5xx rate is judged only in 5 minutes with at least this many requests: on the synthetic
     * client's traffic alone (about 25 requests in 5 minutes) one transient 503 would be 4 %.
     * Chosen so that one 5xx at the minimum stays under the threshold (100 / min < percent).
     */
    readonly serverErrorMinRequests: number;
    /** Refused keys (AuthFailures) in 5 minutes, a ticket: a leaked or revoked key in use, or a broken client. */
    readonly authFailures: number;
    /**
     * `<Function>RefusedShare`, a guard: in 10 minutes, the share of answers a new version refuses
     * (4xx but 429; the authorizer's 401) at least `points` percentage points above the share the
     * versions before it refuse at the same time, each having given `minAnswers` answers or more.
     * Clients reach both versions alike, so what they send moves both shares alike.
     */
    readonly refusedShare: { readonly points: number; readonly minAnswers: number };
    /**
     * `<Function>BusyShare`, a guard of each route function: likewise for the share of answers a new
     * version refuses as busy (429, or 503 with Retry-After). Capacity is shared and clients reach
     * both versions alike, so load moves both shares alike; a version whose own refusals stand out
     * (its DynamoDB client broken, its list slots never free) moves it.
     */
    readonly busyShare: { readonly points: number; readonly minAnswers: number };
    /**
     * The stage's service level objective over 30 days (docs/operating.md#service-level-objectives),
     * whose burn-rate alarms page (infra/cdk/monitoring/slo.ts): the percentage of requests answered
     * without a 5xx. Each operation's latency objective, and each latency guard's threshold, is its
     * contract's (`functions/<operation>/contract.ts`, `alarms`).
     */
    readonly slo: { readonly availabilityPercent: number };
    /**
     * What the stage is expected to cost a month, in USD (docs/reference/costs.md#what-it-costs): the
     * stage's budget stack (StoreOrders-budget-<stage>) budgets this much.
     */
    readonly monthlyCostUsd: number;
  };
  /**
   * The stage's AWS WAF web ACL (infra/cdk/stage-firewall.ts): its rate-based rule counts each
   * source address's requests over this window and blocks the address while it holds more than its
   * busiest key may make in it (infra/tiers.ts, requestsPerAddress). 60 s: a flood is stopped
   * within seconds, and an address that slows down is let through again within a minute.
   */
  readonly firewall: { readonly evaluationWindowSeconds: FirewallWindow };
  /** Serve the stage at https://<domainName>/v1 as well (a regional ACM certificate in the stack's region). */
  readonly customDomain?: { readonly domainName: string; readonly certificateArn: string };
};

/**
 * The synthetic client's tier (npm run keys -- canary), the same on every stage: each minute's run
 * sends the known-answer suite's requests with its key (14 when every answer is right:
 * functions/canary/smoke-check.ts keyedRequestsPerRun), besides a wrong key, as fast as they
 * answer, so the burst holds most of them (a 429 beyond it carries Retry-After: 1, which the
 * runner waits out as busy). The daily quota holds the worst day, every request of every run busy
 * until its fifth try (100,800 requests): a spent quota fails the run, since the service's own
 * probe running out is a configuration error (test/unit/canary-quota.test.ts). The pre-traffic
 * hook presents the key to the authorizer directly, never through the usage plan. A key of this
 * tier is answered a bounded v1 list (shared/probes.ts).
 */
const canaryTier: Tier = {
  throttling: { rateLimit: 2, burstLimit: 8 },
  listThrottling: { rateLimit: 0.5, burstLimit: 2 },
  pagedListThrottling: { rateLimit: 1, burstLimit: 4 },
  dailyQuota: 120_000,
  concurrentLists: 2,
};

export const stages: Readonly<Record<StageName, StageConfig>> = {
  staging: {
    stage: 'staging',
    stackName: stackName('staging'),
    keyPrefix: 'so_test_',
    onlyIssuedKeys: true,
    ordersTableName: 'store-orders-staging-orders',
    apiKeysTableName: 'store-orders-staging-api-keys',
    throttling: { rateLimit: 20, burstLimit: 40 },
    listThrottling: { rateLimit: 2, burstLimit: 4 },
    listReservedConcurrency: 5,
    pagedListThrottling: { rateLimit: 5, burstLimit: 10 },
    pagedListReservedConcurrency: 4,
    tiers: {
      standard: {
        throttling: { rateLimit: 5, burstLimit: 10 },
        listThrottling: { rateLimit: 0.5, burstLimit: 1 },
        pagedListThrottling: { rateLimit: 2, burstLimit: 4 },
        dailyQuota: 20_000,
        concurrentLists: 2,
      },
      high: {
        throttling: { rateLimit: 10, burstLimit: 20 },
        listThrottling: { rateLimit: 1, burstLimit: 2 },
        pagedListThrottling: { rateLimit: 5, burstLimit: 10 },
        dailyQuota: 100_000,
        concurrentLists: 3,
      },
      canary: canaryTier,
    },
    defaultTier: 'standard',
    requireUsageKey: true,
    firewall: { evaluationWindowSeconds: 60 },
    // All at once, but through CodeDeploy too: every deploy to staging rehearses production's path.
    deployment: 'LambdaAllAtOnce',
    authorizerCacheTtlSeconds: 300,
    scanSegments: 4,
    listStallSeconds: 30,
    logLevel: 'DEBUG',
    consoleTestInvoke: true,
    logRetentionDays: 14,
    logRemovalPolicy: 'destroy',
    // No deletion protection: tearing staging down completely includes deleting its retained tables by hand.
    data: { deletionProtection: false },
    ordersStatusIndex: false,
    statusFilterChecks: false,
    alarms: {
      serverErrorRatePercent: 5,
      serverErrorMinRequests: 50,
      authFailures: 100,
      refusedShare: { points: 50, minAnswers: 10 },
      busyShare: { points: 50, minAnswers: 10 },
      slo: { availabilityPercent: 99.5 },
      // At rest $6 + the synthetic client $55 + 100,000 cancels $0.43 + 3,000 lists $3.30, rounded up.
      monthlyCostUsd: 75,
    },
  },
  production: {
    stage: 'production',
    stackName: stackName('production'),
    keyPrefix: 'so_live_',
    onlyIssuedKeys: true,
    ordersTableName: 'store-orders-production-orders',
    apiKeysTableName: 'store-orders-production-api-keys',
    throttling: { rateLimit: 100, burstLimit: 200 },
    listThrottling: { rateLimit: 5, burstLimit: 10 },
    listReservedConcurrency: 10,
    // Pages of up to 1,000 orders: 20 a second, 10 at once (a page takes well under a second), far
    // below the stage's 100 requests a second and the unreserved concurrency cancels run on.
    pagedListThrottling: { rateLimit: 20, burstLimit: 40 },
    pagedListReservedConcurrency: 10,
    tiers: {
      standard: {
        throttling: { rateLimit: 10, burstLimit: 20 },
        listThrottling: { rateLimit: 0.5, burstLimit: 1 },
        pagedListThrottling: { rateLimit: 5, burstLimit: 10 },
        dailyQuota: 100_000,
        concurrentLists: 2,
      },
      high: {
        throttling: { rateLimit: 50, burstLimit: 100 },
        listThrottling: { rateLimit: 2, burstLimit: 4 },
        pagedListThrottling: { rateLimit: 20, burstLimit: 40 },
        dailyQuota: 1_000_000,
        concurrentLists: 4,
      },
      canary: canaryTier,
    },
    defaultTier: 'standard',
    requireUsageKey: true,
    firewall: { evaluationWindowSeconds: 60 },
    // 10% of requests on the new version for 15 minutes: every guard alarm can reach ALARM within it
    // (test/infra/guard-alarms.test.ts); a share guard, over 10 minutes, may need up to 13.
    deployment: 'LambdaCanary10Percent15Minutes',
    authorizerCacheTtlSeconds: 300,
    scanSegments: 8,
    listStallSeconds: 30,
    logLevel: 'INFO',
    consoleTestInvoke: false,
    // A year (Control Tower CT.CLOUDWATCH.PR.2): the access log is the record of which key cancelled which order.
    logRetentionDays: 365,
    logRemovalPolicy: 'retain',
    data: { deletionProtection: true },
    ordersStatusIndex: false,
    statusFilterChecks: false,
    alarms: {
      serverErrorRatePercent: 1,
      serverErrorMinRequests: 200,
      authFailures: 50,
      refusedShare: { points: 50, minAnswers: 10 },
      busyShare: { points: 50, minAnswers: 10 },
      slo: { availabilityPercent: 99.9 },
      // At rest $6 + the synthetic client $55 + 1,000,000 cancels $4.34 + 30,000 lists $33, rounded up.
      monthlyCostUsd: 110,
    },
  },
};

const oneListPerKey = (tiers: Readonly<Record<TierName, Tier>>) =>
  Object.fromEntries(Object.entries(tiers).map(([name, tier]) => [name, { ...tier, concurrentLists: 1 }])) as Record<TierName, Tier>;

/**
 * The local run (npm start) and the key tool's default target. Its functions get their
 * settings from here through the same code as a deployed stage's (infra/function-settings.ts).
 */
export const localStage = {
  stage: 'local',
  keyPrefix: 'so_local_',
  onlyIssuedKeys: false,
  // Measured (docs/operating.md#reliability): on DynamoDB Local one segment lists as fast as four and leaves
  // cancels their throughput. Two list slots: one key's list (each tier runs one at a time
  // locally) leaves a slot for another key's (listSlotProblems); npm run load measures what the
  // second list costs cancels.
  scanSegments: 1,
  listReservedConcurrency: 2,
  // Pages end in milliseconds locally: four at once keep a page client busy without taking every cancel's turn.
  pagedListReservedConcurrency: 4,
  listStallSeconds: stages.production.listStallSeconds,
  logLevel: 'INFO',
  // As on the deployed stages, so a revocation behaves locally as it will there.
  authorizerCacheTtlSeconds: stages.production.authorizerCacheTtlSeconds,
  ordersTableName: 'orders',
  apiKeysTableName: 'api-keys',
  listLeasesTableName: 'list-leases',
  dynamoDbPort: 8000,
  // Production's tiers, so a client meets locally the limits it will meet there, but one list at a
  // time per key (the local stage's two slots leave one for another key), plus the developer's own.
  tiers: { ...oneListPerKey(stages.production.tiers), [unlimitedTier]: unlimitedTier } as Readonly<
    Record<LocalTierName, Tier | typeof unlimitedTier>
  >,
  defaultTier: stages.production.defaultTier,
  /**
   * The local gateway's stand-in for the stage's firewall: authorizations of keys it has not cached
   * (each a lookup) per client address, at the busiest tier's rate and burst; beyond it a request
   * waits its turn, and one that cannot have it within a second is refused (infra/local/address-limits.ts).
   */
  authorizationsPerAddress: busiestKey(stages.production.tiers),
  /** The tier of the key npm start registers (STORE_API_KEY or generated), unless STORE_API_KEY_TIER names another. */
  developerKeyTier: unlimitedTier as LocalTierName,
} as const satisfies FunctionStage & Record<string, unknown>;
