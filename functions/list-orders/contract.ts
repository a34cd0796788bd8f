/**
 * listOrders's contract: everything the rest of the house needs to know about it (infra/contract.ts);
 * the registry (infra/registry.ts) reads it, the handler never does.
 */
import { z } from 'zod';
import type { OperationContract } from '../../infra/function-contract.ts';
import { orderWireSchema, stringIdsQuery } from '../../infra/wire-forms.ts';
import { listExamples } from '../../infra/openapi/examples.ts';
import { type FunctionStage, type StageConfig, stages } from '../../infra/stage-config.ts';
import { metricNames } from '../../shared/observability.ts';
import { maxListMs, minBytesPerSecond } from './list-cuts.ts';
import { listBytesPerOrder, listMaxOrdersOf } from './list-size.ts';
import { route } from './route.ts';

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

/** The most orders one list answers (LIST_MAX_ORDERS, LIST_MAX_ORDERS_GZIP): a larger store is refused before the first byte. */
const listMaxOrders = {
  plain: Math.floor(listResponseBudgetBytes / listBytesPerOrder.default.plain),
  gzip: Math.floor(listResponseBudgetBytes / listBytesPerOrder.default.gzip),
};

const withStringIds = listMaxOrdersOf(listMaxOrders, true);

const millions = (count: number) => `${(count / 1_000_000).toFixed(1)} million`;

/**
 * The v1 list's published description, its numbers from where the service takes them: the size
 * limits above, the stage's tiers and stall window (infra/stage-config.ts), the cuts of a running
 * list (./list-cuts.ts). One document serves every stage: it states `stage`'s (production's) limits.
 */
export const listOrdersDescription = (stage: StageConfig): string =>
  'Every order in the store, cancelled ones included, as one JSON array. No order of the items is promised. ' +
  'There is no filtering and no pagination in v1 (query parameters other than `stringIds` are ignored); both are in v2. ' +
  'The array is streamed as the store is read; a client that sends `Accept-Encoding: gzip` receives it ' +
  `gzip-compressed. One answer carries at most about ${millions(listMaxOrders.plain)} orders uncompressed and ${millions(listMaxOrders.gzip)} with gzip ` +
  `(with \`stringIds=true\`, ${millions(withStringIds.plain)} and ${millions(withStringIds.gzip)}; ` +
  `a streamed answer is capped at ${streamedResponseCapBytes / 1_000_000} MB): a larger store is refused with 406 \`list_too_large\` before the ` +
  `first byte, never cut off. Lists are bounded while they run: in ${stage.stage} one key runs at most ${stage.tiers.standard.concurrentLists} at once (\`standard\` tier; ` +
  `${stage.tiers.high.concurrentLists} for \`high\`), beyond which it gets 429 \`too_many_requests\`; when the service runs as many lists as it takes, ` +
  'a new one gets 503 `service_unavailable` at once; both with `Retry-After`. A client that takes nothing of the ' +
  `answer for ${stage.listStallSeconds} s has its list cut (the connection closes before the closing \`]\`); so has a client that takes less than ` +
  `${minBytesPerSecond.toLocaleString('en-US')} bytes/s, averaged over each ${stage.listStallSeconds} s the answer waits for it, and a list still running after ` +
  `${maxListMs / 60_000} minutes.`;

export const listOrdersContract = {
  name: route.operation,
  route,
  // Reads the whole table with parallel Scans and streams it: more memory means more CPU for
  // JSON and gzip; a streamed response may run up to 15 minutes.
  function: {
    handlerFile: 'functions/list-orders/handler.ts',
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
    // The time to the list's first byte (its ListFirstByte), not to its last: a streamed list lasts as long as its client reads.
    latencyP99: { name: 'ListFirstByte', alarm: 'ListFirstByteP99', thresholdMs: { staging: 4000, production: 2000 } },
    errorsLessClientEnds: true,
    slo: {
      id: 'ListFirstByte',
      what: "lists' first bytes (ListFirstByte)",
      measure: { metricName: metricNames.listFirstByte },
      objective: { staging: { percent: 99, thresholdMs: 4000 }, production: { percent: 99, thresholdMs: 2000 } },
    },
  },
  runbook: 'docs/runbook.md',
  knownAnswers: 'functions/list-orders/known-answers.ts',
  published: {
    description: listOrdersDescription(stages.production),
    success: {
      status: 200,
      description: 'Every order, as a JSON array.',
      body: z.array(orderWireSchema),
      examples: listExamples,
      headers: {
        Vary: {
          required: true,
          description: 'Always `Accept-Encoding`: the body’s encoding depends on it.',
          schema: { type: 'string', const: 'Accept-Encoding' },
          example: 'Accept-Encoding',
        },
        'Content-Encoding': {
          required: false,
          description: '`gzip` when the request sent `Accept-Encoding: gzip`; absent otherwise.',
          schema: { type: 'string', enum: ['gzip'] },
          example: 'gzip',
        },
      },
    },
    queryParameters: stringIdsQuery('ignored'),
    errors: ['list_too_large', 'too_many_requests', 'service_unavailable', 'internal_error'],
  },
} satisfies OperationContract;
