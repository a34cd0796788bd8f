/**
 * The operations table: everything the service states about one operation, beside its route
 * (shared/routes.ts, which the functions themselves carry). The CDK stack, the local service, the
 * per-key limits and the OpenAPI document are all built from it, so adding an operation is one
 * route and one entry here; the compiler names what is missing (test/infra/operations.test.ts).
 * No aws-cdk-lib here: the local run imports this module.
 */
import { z } from 'zod';
import { type FunctionStage, type StageConfig, stages } from './stage-config.ts';
import type { MethodLimitClass } from './tiers.ts';
import { type OperationContract, orderWireSchema, wireInt64 } from './openapi/openapi.ts';
import { cursorMaxAgeSeconds, cursorMaxLength } from '../functions/list-orders-paged/cursor.ts';
import { cursorSecretName } from '../functions/list-orders-paged/cursor-keys.ts';
import { maxListMs, minBytesPerSecond } from '../functions/list-orders/list-cuts.ts';
import { listStatuses, pageSizeBounds, partsBounds } from '../functions/list-orders-paged/list-query.ts';
import { type Operation, routeOf } from '../shared/routes.ts';

/** The deployed (or local) names of the stage's tables. */
export type TableNames = { readonly orders: string; readonly apiKeys: string; readonly listLeases: string };

/**
 * What one Lambda function is (infra/function-settings.ts gathers them by function name). Here, beside
 * the table that fills it in, so that neither module imports the other in a loop.
 */
export type FunctionSettings = {
  /** The handler module, relative to the repository root; it exports `handler`. */
  readonly handlerFile: string;
  readonly description: string;
  readonly memorySize: number;
  readonly timeoutSeconds: number;
  /** Only what this function reads (shared/config.ts); built by infra/function-settings.ts `functionEnvironment`. */
  readonly environment: (stage: FunctionStage, tables: TableNames) => Record<string, string>;
  /** At most this many invocations at once (Lambda reserved concurrency; the local gateway's limit); unset: no cap. */
  readonly reservedConcurrency?: (stage: FunctionStage) => number;
};

/**
 * The DynamoDB actions a function's role allows on each table of its stage, and no more; a table
 * not named: no access (test/infra/iam.test.ts evaluates the synthesized roles against it).
 */
export type TableAccess = {
  readonly orders?: readonly string[];
  readonly apiKeys?: readonly string[];
  readonly listLeases?: readonly string[];
  /** The orders table's status index (shared/status-index.ts `statusIndex`), granted on its own ARN. */
  readonly ordersStatusIndex?: readonly string[];
};

/**
 * Which of the stage's limits hold an operation (infra/stage-config.ts): `request`, the stage's
 * `throttling` and each key's over every operation; `list` and `pagedList`, besides those, the
 * stage's and each tier's `listThrottling` or `pagedListThrottling` as this method's own limit
 * (API Gateway's per-method throttle, a usage plan's per-method throttle, the local gateway's
 * second token bucket: infra/tiers.ts, methodLimitFields).
 */
export type LimitClass = 'request' | MethodLimitClass;

export type OperationFacts = {
  /** Its Lambda function: handler, memory, timeout, environment, reserved concurrency. */
  readonly function: FunctionSettings;
  readonly tableAccess: TableAccess;
  readonly throttling: LimitClass;
  /** How long API Gateway waits for the function: at most 29 s buffered, 15 minutes streamed (the route's `streaming`). */
  readonly integrationTimeoutSeconds: number;
  /**
   * Alarms of this operation beyond its version's guards (`<Name>Errors`, `<Name>RefusedShare`) and
   * its Throttles (infra/cdk/monitoring/). `nearTimeout`: `<Name>NearTimeout`, a ticket when one
   * invocation ran for 80 % of its timeout (a long-running operation); `invocation` is how the
   * alarm's description names one. `latencyP99`: the guard `alarm`, the p99 of its version's
   * answers (`AnswerLatency`: to a buffered answer, or a streamed one's first byte) at or above the
   * stage's `alarms[threshold]` in three of five minutes; the dashboard graphs a buffered route's
   * API Gateway latency as `<name> latency (ms)`. `errorsLessClientEnds`: its `<Name>Errors` reads
   * Lambda's Errors less its version's `StalledListsCut` and `ListsLeftEarly`: a stream cut because
   * its client stopped reading ends in an error Lambda counts, and one its client left may (AWS does
   * not say), but neither client is a failure of the function.
   */
  readonly alarms: {
    readonly nearTimeout?: { readonly invocation: string };
    readonly latencyP99?: {
      readonly name: string;
      readonly alarm: string;
      readonly threshold: 'cancelP99LatencyMs' | 'pagedListP99LatencyMs' | 'listFirstByteP99Ms';
    };
    readonly errorsLessClientEnds?: true;
  };
  /** What its handler answers, as the OpenAPI document states it (infra/openapi/document.ts). */
  readonly contract: OperationContract;
  /** Secrets of the stage its function reads (GetSecretValue on exactly these): `cursorKeys`, the v2 list's cursor keys. */
  readonly secrets?: readonly 'cursorKeys'[];
};

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

/** AWS caps a streamed Lambda response at 200 MB. */
const streamedResponseCapBytes = 200_000_000;

/**
 * One list answer's byte budget, below the streamed response's cap: the rest is margin for
 * orders larger than the measured ones and for an ItemCount that is hours old.
 */
export const listResponseBudgetBytes = 180_000_000;

/**
 * Bytes per order in the list's JSON, with headroom over what `npm run bench` measures (about
 * 104 plain and 10 to 25 gzip-compressed, depending on how alike the orders are): docs/api.md#limits-of-the-deployed-list.
 */
export const listBytesPerOrder = { plain: 128, gzip: 32 } as const;

/** The most orders one list answers (LIST_MAX_ORDERS, LIST_MAX_ORDERS_GZIP): a larger store is refused before the first byte. */
const listMaxOrders = {
  plain: Math.floor(listResponseBudgetBytes / listBytesPerOrder.plain),
  gzip: Math.floor(listResponseBudgetBytes / listBytesPerOrder.gzip),
};

const millions = (count: number) => `${(count / 1_000_000).toFixed(1)} million`;

/**
 * The v1 list's published description, its numbers from where the service takes them: the size
 * limits above, the stage's tiers and stall window (infra/stage-config.ts), the cuts of a running
 * list (functions/list-orders/list-cuts.ts). One document serves every stage: it states `stage`'s (production's) limits.
 */
export const listOrdersDescription = (stage: StageConfig): string =>
  'Every order in the store, cancelled ones included, as one JSON array. No order of the items is promised. ' +
  'There is no filtering and no pagination in v1 (query parameters are ignored); both are planned for v2. ' +
  'The array is streamed as the store is read; a client that sends `Accept-Encoding: gzip` receives it ' +
  `gzip-compressed. One answer carries at most about ${millions(listMaxOrders.plain)} orders uncompressed and ${millions(listMaxOrders.gzip)} with gzip ` +
  `(a streamed answer is capped at ${streamedResponseCapBytes / 1_000_000} MB): a larger store is refused with 406 \`list_too_large\` before the ` +
  `first byte, never cut off. Lists are bounded while they run: in ${stage.stage} one key runs at most ${stage.tiers.standard.concurrentLists} at once (\`standard\` tier; ` +
  `${stage.tiers.high.concurrentLists} for \`high\`), beyond which it gets 429 \`too_many_requests\`; when the service runs as many lists as it takes, ` +
  'a new one gets 503 `service_unavailable` at once; both with `Retry-After`. A client that takes nothing of the ' +
  `answer for ${stage.listStallSeconds} s has its list cut (the connection closes before the closing \`]\`); so has a client that takes less than ` +
  `${minBytesPerSecond.toLocaleString('en-US')} bytes/s, averaged over each ${stage.listStallSeconds} s the answer waits for it, and a list still running after ` +
  `${maxListMs / 60_000} minutes.`;

/** The v2 list's page: its orders and, unless it is the last page, the cursor of the next one. */
export const orderPageWireSchema = z
  .object({
    orders: z.array(orderWireSchema).max(pageSizeBounds.max),
    nextCursor: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/)
      .max(1024)
      .optional()
      .meta({ description: 'Opaque (base64url): send it as `cursor` for the next page. Absent on the last page, and only there.' }),
  })
  .meta({
    id: 'OrderPage',
    description: 'One page of a v2 list.',
    example: {
      orders: [{ id: 1, petId: 101, quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false, status: 'pending' }],
      nextCursor: 'AcWq3yH0b1m9Zx8kJr2TQv5nLd7sP4eF',
    },
  });

const boundedInteger = (min: number, max: number, description: string, example: number) =>
  z.int().min(min).max(max).optional().meta({ format: 'int32', description, example });
const shipDateBound = (description: string, example: string) =>
  z.iso.datetime({ offset: true }).max(64).optional().meta({ description, example });

/** The v2 list's query parameters, with the bounds functions/list-orders-paged/list-query.ts enforces. */
const pagedListQuery = {
  pageSize: boundedInteger(
    pageSizeBounds.min,
    pageSizeBounds.max,
    `Orders per page at most (default ${pageSizeBounds.default}). A page may hold fewer, even none, without being the last.`,
    pageSizeBounds.max,
  ).default(pageSizeBounds.default),
  status: z.enum(listStatuses).optional().meta({ description: 'Only orders of this status.', example: 'pending' }),
  shipDateFrom: shipDateBound('Only orders whose shipDate is at or after this instant (RFC 3339 date-time).', '2026-12-01T00:00:00Z'),
  shipDateTo: shipDateBound(
    'Only orders whose shipDate is before this instant (RFC 3339 date-time); later than `shipDateFrom` when both are sent.',
    '2027-01-01T00:00:00Z',
  ),
  part: boundedInteger(
    1,
    partsBounds.max,
    'A split read: which part (1-based) of `parts` this read is. Send `part` and `parts` both, or neither.',
    1,
  ),
  parts: boundedInteger(
    partsBounds.min,
    partsBounds.max,
    'A split read: into how many parts the store is split; the parts together are the whole read.',
    4,
  ),
  cursor: z
    .string()
    .min(1)
    .max(cursorMaxLength)
    .regex(/^[A-Za-z0-9_-]+$/)
    .optional()
    .meta({
      description:
        `The previous page's \`nextCursor\`, unchanged, to read the next page; sent with the same status, shipDateFrom, shipDateTo, ` +
        `part and parts as the request that made it (pageSize may differ). It expires ${cursorMaxAgeSeconds / 3600} hours after it was issued.`,
    }),
};

export const operations: Readonly<Record<Operation, OperationFacts>> = {
  listOrders: {
    // Reads the whole table with parallel Scans and streams it: more memory means more CPU for
    // JSON and gzip; a streamed response may run up to 15 minutes.
    function: {
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
        LIST_MAX_ORDERS: String(listMaxOrders.plain),
        LIST_MAX_ORDERS_GZIP: String(listMaxOrders.gzip),
      }),
      reservedConcurrency: (stage) => stage.listReservedConcurrency,
    },
    // DescribeTable: the list reads the table's item count to refuse a list too large for one answer.
    // PutItem/DeleteItem: a lease per running list of a key, taken and given back by conditional writes.
    tableAccess: {
      orders: ['dynamodb:Scan', 'dynamodb:DescribeTable'],
      listLeases: ['dynamodb:PutItem', 'dynamodb:DeleteItem'],
    },
    // Every list is a full-table Scan: its own throttle, below the stage's.
    throttling: 'list',
    integrationTimeoutSeconds: 15 * 60,
    alarms: {
      nearTimeout: { invocation: 'A list' },
      latencyP99: { name: 'ListFirstByte', alarm: 'ListFirstByteP99', threshold: 'listFirstByteP99Ms' },
      errorsLessClientEnds: true,
    },
    contract: {
      description: listOrdersDescription(stages.production),
      success: {
        status: 200,
        description: 'Every order, as a JSON array.',
        body: z.array(orderWireSchema),
        headers: {
          Vary: {
            required: true,
            description: 'Always `Accept-Encoding`: the body’s encoding depends on it.',
            schema: { type: 'string', const: 'Accept-Encoding' },
          },
          'Content-Encoding': {
            required: false,
            description: '`gzip` when the request sent `Accept-Encoding: gzip`; absent otherwise.',
            schema: { type: 'string', enum: ['gzip'] },
          },
        },
      },
      errors: ['list_too_large', 'too_many_requests', 'service_unavailable', 'internal_error'],
    },
  },

  cancelOrder: {
    // One conditional UpdateItem. The timeout leaves room for DynamoDB's bounded retries so a
    // slow database still ends in a 503 from the function, well before API Gateway's 29 s.
    function: {
      handlerFile: routeOf('cancelOrder').handlerFile,
      description: 'Store Orders: DELETE /v1/store/orders/{orderId} (cancelOrder)',
      memorySize: 512,
      timeoutSeconds: 10,
      environment: (_stage, tables) => ({ ORDERS_TABLE: tables.orders }),
    },
    tableAccess: { orders: ['dynamodb:UpdateItem'] },
    throttling: 'request',
    integrationTimeoutSeconds: 29,
    alarms: { latencyP99: { name: 'Cancel', alarm: 'CancelLatencyP99', threshold: 'cancelP99LatencyMs' } },
    contract: {
      description:
        'Cancels a `pending` order (its status becomes `cancelled`). Cancelling an order that is already cancelled ' +
        'answers 204 again and changes nothing, so a retry is safe. A `shipped` order cannot be cancelled.',
      pathParameters: {
        orderId: wireInt64('Identifier of the order to cancel, a base-10 int64 (every digit is kept, also above 2^53 − 1).'),
      },
      success: { status: 204, description: 'The order is cancelled (or already was). No body.' },
      errors: [
        'invalid_order_id',
        'order_not_found',
        'order_already_shipped',
        'order_not_cancellable',
        'service_unavailable',
        'internal_error',
      ],
    },
  },

  listOrdersPaged: {
    // One Scan or Query page of at most 1000 orders per invocation (about 130 KB of JSON). The timeout
    // covers two reads of the cursor keys' secret and the page's DynamoDB call, each at its own
    // deadline (test/unit/timeouts.test.ts), well before API Gateway's 29 s.
    function: {
      handlerFile: routeOf('listOrdersPaged').handlerFile,
      description: 'Store Orders: GET /v2/store/orders (listOrdersPaged)',
      memorySize: 512,
      timeoutSeconds: 15,
      environment: (stage, tables) => ({
        ORDERS_TABLE: tables.orders,
        STAGE_NAME: stage.stage,
        // The local run has no Secrets Manager: it passes CURSOR_SECRETS instead (infra/local/local-api.ts).
        ...(stage.stage === 'local' ? {} : { CURSOR_SECRET_ID: cursorSecretName(stage.stage) }),
      }),
      // Every page is a Scan or Query of up to 1,000 orders: bounded apart, so pages cannot take the concurrency cancels need.
      reservedConcurrency: (stage) => stage.pagedListReservedConcurrency,
    },
    // Scan: the table, whole or one segment; Query: the status index, and no other index.
    tableAccess: { orders: ['dynamodb:Scan'], ordersStatusIndex: ['dynamodb:Query'] },
    secrets: ['cursorKeys'],
    throttling: 'pagedList',
    integrationTimeoutSeconds: 29,
    alarms: { latencyP99: { name: 'PagedList', alarm: 'PagedListLatencyP99', threshold: 'pagedListP99LatencyMs' } },
    contract: {
      description:
        '**Experimental.** Orders in pages: each page holds up to `pageSize` orders and, unless it is the last, a `nextCursor` ' +
        '(and a `Link: <…>; rel="next"` header) for the next one. Every order present for the whole read appears exactly once ' +
        'across its pages; a page may hold fewer orders than `pageSize`, even none, without being the last. Filters: ' +
        '`status`, and a `shipDate` range (`shipDateFrom` inclusive, `shipDateTo` exclusive; an order without a shipDate ' +
        'never matches it). A split read (`part` k of `parts` n) reads one nth of the store; the n parts together are the ' +
        'whole read. A cursor is bound to the stage, the filters and the part it was made for, and expires ' +
        `${cursorMaxAgeSeconds / 3600} hours after it was issued.`,
      queryParameters: pagedListQuery,
      success: {
        status: 200,
        description: 'One page of orders.',
        body: orderPageWireSchema,
        headers: {
          Link: {
            required: false,
            description:
              'RFC 8288 `<?…>; rel="next"`: the next page (the same parameters and its `cursor`), a reference of a query alone that resolves against the requested URL (RFC 3986 §5.2.2). Absent on the last page.',
            schema: { type: 'string', maxLength: 2048, pattern: '^<\\?[^>]*>; rel="next"$' },
          },
        },
      },
      errors: ['invalid_query_parameter', 'invalid_cursor', 'cursor_expired', 'cursor_mismatch', 'service_unavailable', 'internal_error'],
    },
  },
};

/** The authorizer is no operation, but a function with settings and table access all the same. */
export const authorizer: Pick<OperationFacts, 'function' | 'tableAccess'> = {
  // One GetItem per uncached key. The timeout leaves room for DynamoDB's bounded retries, so a
  // slow database ends in a failure the gateway reports (500), never in a hung request.
  function: {
    handlerFile: 'functions/authorizer/handler.ts',
    description: 'Store Orders: TOKEN authorizer (bearer API keys)',
    memorySize: 512,
    timeoutSeconds: 10,
    environment: (_stage, tables) => ({ API_KEYS_TABLE: tables.apiKeys }),
  },
  // It looks a key's hash up, nothing more.
  tableAccess: { apiKeys: ['dynamodb:GetItem'] },
};

/** One fact of every operation, by operation (e.g. each one's contract). */
export const perOperation = <Fact>(fact: (facts: OperationFacts) => Fact): Record<Operation, Fact> =>
  Object.fromEntries(Object.entries(operations).map(([operation, facts]) => [operation, fact(facts)])) as Record<Operation, Fact>;

/** The entry of an operation the table has, or undefined (test-only routes of the local gateway have none). */
export const factsOf = (operation: string): OperationFacts | undefined =>
  Object.hasOwn(operations, operation) ? operations[operation as Operation] : undefined;
