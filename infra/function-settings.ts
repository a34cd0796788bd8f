/**
 * What each Lambda function is: its handler, memory, timeout and environment. The CDK stack
 * deploys exactly this, and the local run (npm start) runs the same handlers with exactly this,
 * so the two cannot drift. No aws-cdk-lib here: the local run imports this module.
 */
import { type Operation, routeOf } from '../shared/routes.ts';
import { type FunctionStage, serviceName } from './stage-config.ts';

export type FunctionName = Operation | 'authorizer';

/** The deployed (or local) names of the stage's tables. */
export type TableNames = { readonly orders: string; readonly apiKeys: string; readonly listLeases: string };

/**
 * Each tier's concurrent lists per key, as the list function reads them (LIST_CONCURRENT_PER_KEY):
 * `standard=2,high=4,*=2`, `*` being the default tier's, for a key whose tier is named nowhere here.
 * The local `unlimited` tier has no per-key bound (`none`): only the stage's list concurrency.
 */
export const concurrentListsPerKey = (stage: FunctionStage): string => {
  const of = (tier: string | undefined) => {
    const limits = tier === undefined ? undefined : stage.tiers[tier];
    return limits === undefined || limits === 'unlimited' ? 'none' : String(limits.concurrentLists);
  };
  return [...Object.keys(stage.tiers).map((tier) => `${tier}=${of(tier)}`), `*=${of(stage.defaultTier)}`].join(',');
};

export type FunctionSettings = {
  /** The handler module, relative to the repository root; it exports `handler`. */
  readonly handlerFile: string;
  readonly description: string;
  readonly memorySize: number;
  readonly timeoutSeconds: number;
  /** Only what this function reads (shared/config.ts). */
  readonly environment: (stage: FunctionStage, tables: TableNames) => Record<string, string>;
  /** At most this many invocations at once (Lambda reserved concurrency; the local gateway's limit); unset: no cap. */
  readonly reservedConcurrency?: (stage: FunctionStage) => number;
};

/**
 * One list answer's byte budget: AWS caps a streamed Lambda response at 200 MB. The rest is
 * margin for orders larger than the measured ones and for an ItemCount that is hours old.
 */
export const listResponseBudgetBytes = 180_000_000;

/**
 * Bytes per order in the list's JSON, with headroom over what `npm run bench` measures (about
 * 104 plain and 10 to 25 gzip-compressed, depending on how alike the orders are): docs/api.md#limits-of-the-deployed-list.
 */
export const listBytesPerOrder = { plain: 128, gzip: 32 } as const;

export const functionSettings: Readonly<Record<FunctionName, FunctionSettings>> = {
  // One GetItem per uncached key. The timeout leaves room for DynamoDB's bounded retries, so a
  // slow database ends in a failure the gateway reports (500), never in a hung request.
  authorizer: {
    handlerFile: 'functions/authorizer.ts',
    description: 'Store Orders: TOKEN authorizer (bearer API keys)',
    memorySize: 512,
    timeoutSeconds: 10,
    environment: (_stage, tables) => ({ API_KEYS_TABLE: tables.apiKeys }),
  },
  // Reads the whole table with parallel Scans and streams it: more memory means more CPU for
  // JSON and gzip; a streamed response may run up to 15 minutes.
  listOrders: {
    handlerFile: routeOf('listOrders').handlerFile,
    description: 'Store Orders: GET /v1/store/orders (listOrders)',
    memorySize: 1024,
    timeoutSeconds: 15 * 60,
    environment: (stage, tables) => ({
      ORDERS_TABLE: tables.orders,
      LIST_LEASES_TABLE: tables.listLeases,
      LIST_CONCURRENT_PER_KEY: concurrentListsPerKey(stage),
      LIST_STALL_SECONDS: String(stage.listStallSeconds),
      SCAN_SEGMENTS: String(stage.scanSegments),
      LIST_MAX_ORDERS: String(Math.floor(listResponseBudgetBytes / listBytesPerOrder.plain)),
      LIST_MAX_ORDERS_GZIP: String(Math.floor(listResponseBudgetBytes / listBytesPerOrder.gzip)),
    }),
    reservedConcurrency: (stage) => stage.listReservedConcurrency,
  },
  // One conditional UpdateItem. The timeout leaves room for DynamoDB's bounded retries so a
  // slow database still ends in a 503 from the function, well before API Gateway's 29 s.
  cancelOrder: {
    handlerFile: routeOf('cancelOrder').handlerFile,
    description: 'Store Orders: DELETE /v1/store/orders/{orderId} (cancelOrder)',
    memorySize: 512,
    timeoutSeconds: 10,
    environment: (_stage, tables) => ({ ORDERS_TABLE: tables.orders }),
  },
};

/**
 * The environment a function runs with: what it reads, plus the Powertools settings of the
 * stage. The service name comes from here only (shared/observability.ts passes none), so every
 * log line and metric of a stage carries `service=store-orders-<stage>`, which its alarms read.
 */
export const functionEnvironment = (name: FunctionName, stage: FunctionStage, tables: TableNames): Record<string, string> => ({
  ...functionSettings[name].environment(stage, tables),
  POWERTOOLS_SERVICE_NAME: serviceName(stage),
  POWERTOOLS_LOG_LEVEL: stage.logLevel,
});
