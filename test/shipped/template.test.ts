import { describe, expect, it } from 'vitest';
import { flatKeys, jsonPathFields, queryFields, resolve } from '../lib/template.ts';

describe('reading a template as CloudWatch will', () => {
  it('finds the fields a Logs Insights query reads, without its functions, aliases, literals and @ fields', () => {
    expect(queryFields("fields @timestamp, level, error.message\n| filter level in ['ERROR', 'WARN'] and statusCode >= 500")).toEqual([
      'level',
      'error.message',
      'statusCode',
    ]);
    expect(queryFields('stats count(*) as requests by status, bin(5m)\n| sort requests desc')).toEqual(['status']);
    expect(queryFields("filter @type = 'REPORT' | stats pct(@duration, 99) as p99 by @log")).toEqual([]);
  });

  it('finds the fields a metric filter pattern reads', () => {
    expect(jsonPathFields('{ ($.errorResponseType = "A") || ($.error.type = "B") }')).toEqual(['errorResponseType', 'error.type']);
  });

  it('flattens nested keys as Logs Insights does', () => {
    expect(flatKeys({ level: 'ERROR', error: { message: 'x' } })).toEqual(['level', 'error', 'error.message']);
  });

  it('keeps references as placeholders and joins what Fn::Join joins', () => {
    expect(resolve({ 'Fn::Join': ['', ['SOURCE ', { Ref: 'Logs1' }, ' ', { 'Fn::GetAtt': ['Fn', 'Arn'] }]] })).toBe(
      'SOURCE ${Logs1} ${Fn.Arn}',
    );
  });
});
