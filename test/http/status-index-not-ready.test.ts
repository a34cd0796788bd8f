import { DescribeTableCommand, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smoke } from '../../functions/canary/smoke-check.ts';
import { loadSuites } from '../../infra/registry.ts';
import { indexRetryAfterSeconds } from '../../functions/list-orders-paged/page-read.ts';
import { statusIndex } from '../../shared/status-index.ts';
import { order, request, startTestApi } from '../lib/local-api.ts';

// A stage deployed with ordersStatusIndex false (docs/reference/stages.md#the-status-index): the orders
// table has no status index, as a DynamoDB Local table whose index was deleted. The backfilling
// index, which DynamoDB Local cannot hold on demand, is in test/unit/handler-faults.test.ts.
let api: Awaited<ReturnType<typeof startTestApi>>;
let v2: string;
beforeAll(async () => {
  api = await startTestApi([order('1', 'pending'), order('9007199254740993', 'shipped')], {
    environment: { CURSOR_SECRETS: JSON.stringify({ current: 'test-cursor-secret-0123456789abcdef' }) },
  });
  v2 = api.url.replace(/\/v1$/, '/v2');
  const table = { TableName: api.orders.tableName };
  await api.client.send(new UpdateTableCommand({ ...table, GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: statusIndex.name } }] }));
  for (let tries = 0; tries < 50; tries++) {
    const { Table } = await api.client.send(new DescribeTableCommand(table));
    if ((Table?.GlobalSecondaryIndexes ?? []).length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the status index was not deleted');
});
afterAll(() => api.close());

describe('GET /v2/store/orders on an orders table without the status index', () => {
  it('answers a status filter 503 service_unavailable with Retry-After, never a 500', async () => {
    const response = await request(v2, 'GET', '/store/orders?status=pending', api.auth);
    expect(response.status).toBe(503);
    expect(response.body).toEqual({
      code: 'service_unavailable',
      message: 'The status filter is not available yet: retry later, or read without status.',
      status: 503,
    });
    expect(response.headers.get('retry-after')).toBe(String(indexRetryAfterSeconds));
  });

  it('still answers every read without a status filter, int64 exact', async () => {
    const response = await request(v2, 'GET', '/store/orders?pageSize=10', api.auth);
    expect(response.status).toBe(200);
    expect([...response.text.matchAll(/"id":(-?\d+)/g)].map((m) => m[1]).sort()).toEqual(['1', '9007199254740993']);
  });
});

// The synthetic client and the pipeline's smoke step run the smoke check against such a stage until
// its statusFilterChecks is turned on (docs/reference/stages.md#the-status-index).
describe('the smoke check on a stage without the status index', () => {
  const run = async (statusFilter: boolean) => {
    const lines: string[] = [];
    const options = { baseUrl: api.url, key: api.key, timeoutMs: 6_000, statusFilter, noOrders: 'not this test' };
    const { failed, busy } = await smoke(options, await loadSuites(), (line) => lines.push(line));
    return { failed, busy, lines };
  };

  it('passes without asking for a filtered page when statusFilter is off', async () => {
    const { failed, busy, lines } = await run(false);
    expect(lines).toContain(
      "SKIP  v2 page filtered by status: no filtered page on this stage until its status index is ACTIVE (its config's statusFilterChecks)",
    );
    expect(lines.filter((line) => /^(FAIL|BUSY)/.test(line))).toEqual([]);
    expect([failed, busy]).toEqual([0, 0]);
  });

  it('reports the documented 503 with Retry-After as busy, not failed, when statusFilter is on: a backfilling index fails no run', async () => {
    const { failed, busy, lines } = await run(true);
    expect(lines).toContain(
      `BUSY  v2 page filtered by status: 503 service_unavailable, Retry-After ${indexRetryAfterSeconds} (1 try), past this run's time`,
    );
    expect(lines.filter((line) => line.startsWith('FAIL'))).toEqual([]);
    expect([failed, busy]).toEqual([0, 1]);
    expect(lines.at(-1)).toBe("9 of 12 checks passed, 1 busy (refused with Retry-After until the run's time ran out), 2 skipped.");
  });
});
