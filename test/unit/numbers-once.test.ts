import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { describe, expect, it } from 'vitest';
import { functionEnvironment, functionSettings } from '../../infra/function-settings.ts';
import { functionsOf } from '../../infra/registry.ts';
import { listOrdersDescription } from '../../functions/list-orders/contract.ts';
import { buildOpenApiDocument } from '../../infra/openapi/document.ts';
import { type StageConfig, stages } from '../../infra/stage-config.ts';
import { tableOperations } from '../../infra/cdk/table-operations.ts';
import { maxListMs, minBytesPerSecond } from '../../functions/list-orders/list-cuts.ts';

// Every number once: what the published contract and the monitoring state is read from where the
// service takes it, never written a second time (docs/decisions/0117-one-table-of-per-operation-facts.md).
const production = stages.production;
const tables = { orders: 'o', apiKeys: 'k', listLeases: 'l' };

describe("the v1 list's published description", () => {
  const published = (buildOpenApiDocument().paths?.['/v1/store/orders'] as { get: { description: string } }).get.description;

  it("is built from production's configuration", () => {
    expect(published).toBe(listOrdersDescription(production));
  });

  it('states the limits the list function runs with', () => {
    const environment = functionEnvironment(functionSettings.listOrders, production, tables);
    const millions = (count: string) => `${(Number(count) / 1_000_000).toFixed(1)} million`;
    expect(published).toContain(`about ${millions(environment.LIST_MAX_ORDERS!)} orders uncompressed`);
    expect(published).toContain(`${millions(environment.LIST_MAX_ORDERS_GZIP!)} with gzip`);
    expect(environment.LIST_CONCURRENT_PER_KEY).toBe('standard=2,high=4,canary=2,*=2');
    expect(published).toContain('at most 2 at once (`standard` tier; 4 for `high`)');
    expect(environment.LIST_STALL_SECONDS).toBe('30');
    expect(published).toContain('takes nothing of the answer for 30 s has its list cut');
    expect([minBytesPerSecond, maxListMs]).toEqual([200_000, 14 * 60_000]);
    expect(published).toContain('less than 200,000 bytes/s, averaged over each 30 s the answer waits for it');
    expect(published).toContain('a list still running after 14 minutes.');
  });

  it('follows a change of the configuration', () => {
    const changed: StageConfig = {
      ...production,
      listStallSeconds: 45,
      tiers: { ...production.tiers, standard: { ...production.tiers.standard, concurrentLists: 3 } },
    };
    const text = listOrdersDescription(changed);
    expect(text).toContain('at most 3 at once (`standard` tier; 4 for `high`)');
    expect(text).toContain('takes nothing of the answer for 45 s');
    expect(text).toContain('averaged over each 45 s');
    expect(text).not.toContain('30 s');
  });
});

describe('the operations the monitoring watches on each table', () => {
  it('are those the functions are granted (tableAccess), in dynamodb.Operation order, DescribeTable left out', () => {
    const grants = functionsOf().map((contract) => contract.tableAccess);
    expect(tableOperations(grants)).toEqual({
      orders: [dynamodb.Operation.SCAN, dynamodb.Operation.QUERY, dynamodb.Operation.UPDATE_ITEM],
      apiKeys: [dynamodb.Operation.GET_ITEM],
      listLeases: [dynamodb.Operation.PUT_ITEM, dynamodb.Operation.DELETE_ITEM],
    });
  });

  it('grow with a grant, and refuse an action the monitoring cannot watch', () => {
    expect(tableOperations([{ listLeases: ['dynamodb:GetItem'] }]).listLeases).toEqual([dynamodb.Operation.GET_ITEM]);
    expect(() => tableOperations([{ orders: ['dynamodb:ConditionCheckItem'] }])).toThrow(/dynamodb:ConditionCheckItem/);
  });
});
