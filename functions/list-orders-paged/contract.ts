/**
 * listOrdersPaged's contract (the experimental v2 list): everything the rest of the house needs to
 * know about it (infra/contract.ts); the registry (infra/registry.ts) reads it, the handler never does.
 * Retiring v2 is this folder and its registry line.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { OperationContract } from '../../infra/function-contract.ts';
import { orderWireSchema, stringIdsQuery } from '../../infra/wire-forms.ts';
import { linkExample, pageExample } from '../../infra/openapi/examples.ts';
import { cursorMaxAgeSeconds, cursorMaxLength } from './cursor.ts';
import { cursorSecretName } from './cursor-keys.ts';
import { listStatuses, pageSizeBounds, partsBounds } from './list-query.ts';
import { route } from './route.ts';

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
  .meta({ id: 'OrderPage', description: 'One page of a v2 list.' });

const boundedInteger = (min: number, max: number, description: string, example: number) =>
  z.int().min(min).max(max).optional().meta({ format: 'int32', description, example });
const shipDateBound = (description: string, example: string) =>
  z.iso.datetime({ offset: true }).max(64).optional().meta({ description, example });

/** The query parameters, with the bounds ./list-query.ts enforces. */
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
  ...stringIdsQuery('refused'),
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

export const listOrdersPagedContract = {
  name: route.operation,
  route,
  // One Scan or Query page of at most pageSizeBounds.max orders per invocation (about 130 KB of
  // JSON). The timeout covers two reads of the cursor keys' secret and the page's DynamoDB call,
  // each at its own deadline (test/unit/timeouts.test.ts), well before API Gateway's 29 s.
  function: {
    handlerFile: 'functions/list-orders-paged/handler.ts',
    description: 'Store Orders: GET /v2/store/orders (listOrdersPaged)',
    memorySize: 512,
    timeoutSeconds: 15,
    environment: (stage, tables) => ({
      ORDERS_TABLE: tables.orders,
      STAGE_NAME: stage.stage,
      // The local run has no Secrets Manager: its cursor key is made for the run (its cursors end with
      // it), unless CURSOR_SECRETS names one.
      ...(stage.stage === 'local'
        ? { CURSOR_SECRETS: process.env.CURSOR_SECRETS ?? JSON.stringify({ current: randomBytes(32).toString('base64url') }) }
        : { CURSOR_SECRET_ID: cursorSecretName(stage.stage) }),
    }),
    // Every page is a Scan or Query of up to pageSizeBounds.max orders: bounded apart, so pages cannot
    // take the concurrency cancels need.
    reservedConcurrency: (stage) => stage.pagedListReservedConcurrency,
  },
  // Scan: the table, whole or one segment; Query: the status index, and no other index.
  tableAccess: { orders: ['dynamodb:Scan'], ordersStatusIndex: ['dynamodb:Query'] },
  // The cursor keys: `{"current": <random>}`, rotated by hand (docs/runbook.md#rotating-the-cursor-key):
  // the old key moves to `previous` for a day, so cursors in flight still open.
  secrets: [
    {
      id: 'CursorKeys',
      name: cursorSecretName,
      description: (stage) => `Store Orders ${stage}: keys of the v2 list's page cursors (current, previous)`,
      generatedKey: 'current',
      manualRotation:
        'Rotated by hand (docs/runbook.md#rotating-the-cursor-key): a rotation must keep the old key as "previous" for the cursor lifetime (24 h), which a single-user rotation Lambda does not do; a leaked key only lets its holder forge cursors, which reach no more orders than the key holder may list anyway.',
    },
  ],
  throttling: 'pagedList',
  integrationTimeoutSeconds: 29,
  alarms: {
    // API Gateway's latency of GET /v2/store/orders, in three of five 1-minute periods (docs/decisions.md#v2-list-access-paths).
    latencyP99: { name: 'PagedList', alarm: 'PagedListLatencyP99', thresholdMs: { staging: 4000, production: 2000 } },
  },
  runbook: 'docs/runbook.md',
  knownAnswers: 'functions/list-orders-paged/known-answers.ts',
  published: {
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
      examples: { firstPage: pageExample },
      headers: {
        Link: {
          required: false,
          description:
            'RFC 8288 `<?…>; rel="next"`: the next page (the same parameters and its `cursor`), a reference of a query alone that resolves against the requested URL (RFC 3986 §5.2.2). Absent on the last page.',
          schema: { type: 'string', maxLength: 2048, pattern: '^<\\?[^>]*>; rel="next"$' },
          example: linkExample,
        },
      },
    },
    errors: ['invalid_query_parameter', 'invalid_cursor', 'cursor_expired', 'cursor_mismatch', 'service_unavailable', 'internal_error'],
  },
} satisfies OperationContract;
