import { describe, expect, it } from 'vitest';
import { functionSettings } from '../../infra/function-settings.ts';
import { type CostInputs, costScenarios, prices } from '../perf/cost.ts';

// Round figures, so every expected cost below can be checked by hand.
const measured: CostInputs = {
  cancel: { functionMs: 3.2, writeUnits: 1 },
  authorizer: { functionMs: 2, readUnits: 0.5 },
  list: { orders: 50_000, functionMs: 1_000, gzipFunctionMs: 1_500, readUnits: 500, bodyBytes: 10 * 1024 * 1024, gzipBytes: 1024 * 1024 },
};
const [cancels, authorizer, list, listGzip] = costScenarios(measured);
const line = (scenario: typeof cancels, item: string) => scenario!.lines.find((l) => l.item.startsWith(item))!.usd;

describe('the cost figures npm run bench prints', () => {
  it('prices a million cancels: API Gateway and Lambda requests, whole milliseconds at the deployed memory, one write each', () => {
    expect(functionSettings.cancelOrder.memorySize).toBe(512);
    expect(line(cancels, 'API Gateway')).toBeCloseTo(3.5, 10);
    expect(line(cancels, 'Lambda cancelOrder requests')).toBeCloseTo(0.2, 10);
    // 3.2 ms is billed as 4 ms: 1e6 × 0.5 GB × 0.004 s = 2,000 GB-s.
    expect(line(cancels, 'Lambda cancelOrder duration')).toBeCloseTo(2_000 * prices.lambdaPerGbSecond, 10);
    expect(line(cancels, 'DynamoDB write')).toBeCloseTo(0.625, 10);
    expect(cancels!.totalUsd).toBeCloseTo(3.5 + 0.2 + 2_000 * prices.lambdaPerGbSecond + 0.625, 10);
  });

  it('prices authorizer runs per 100,000 cache misses, one eventually consistent read each', () => {
    expect(authorizer!.lines.map((l) => l.item).join()).not.toContain('API Gateway');
    expect(line(authorizer, 'DynamoDB read')).toBeCloseTo(50_000 * (0.125 / 1e6), 12);
  });

  it('scales a list measured on another table size to 100,000 orders, streaming charged beyond 6 MB only', () => {
    // Twice the measured table: 20 MiB body, 2 s at 1024 MB, 1,000 read units.
    expect(list!.name).toBe('one list of 100,000 orders');
    expect(line(list, 'Lambda listOrders duration')).toBeCloseTo(1 * 2 * prices.lambdaPerGbSecond, 12);
    expect(line(list, 'Lambda response streaming')).toBeCloseTo((14 / 1024) * prices.lambdaStreamingPerGb, 12);
    expect(line(list, 'DynamoDB read')).toBeCloseTo(1_000 * (0.125 / 1e6), 12);
    expect(line(list, 'data transfer out')).toBeCloseTo((20 / 1024) * prices.dataTransferOutPerGb, 12);
    // gzip: 2 MiB on the wire, under the free 6 MB; its own (slower) duration.
    expect(line(listGzip, 'Lambda response streaming')).toBe(0);
    expect(line(listGzip, 'Lambda listOrders duration')).toBeCloseTo(1 * 3 * prices.lambdaPerGbSecond, 12);
  });
});
