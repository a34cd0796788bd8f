/**
 * A registry's known answers run where the registry says, as shipped: the pre-traffic hook bundled
 * from a registry with a throw-away operation added (test/fixtures/throw-away-operation/: its
 * route, handler, contract and known answers, and nothing anywhere else) runs that operation's
 * checks against its new version and passes; from a registry without v2 (its folder and line taken
 * away) it passes with no v2 check and no setting naming v2. Its synth alone:
 * test/infra/registry.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Registry } from '../../infra/registry.ts';
import { withoutV2, withThrowAway } from '../fixtures/throw-away-operation/contract.ts';
import { order } from '../lib/local-api.ts';
import { arnOf, shippedHookStage } from '../lib/hook-stage.ts';

describe.each([
  ['with a throw-away operation added', withThrowAway, ['authorizer', 'listOrders', 'cancelOrder', 'listOrdersPaged', 'throwAway']],
  ['with v2 taken away', withoutV2, ['authorizer', 'listOrders', 'cancelOrder']],
] as [string, Registry, string[]][])('the pre-traffic hook of a registry %s', (_what, registry, names) => {
  const { stage, start, runHook, close } = shippedHookStage(registry);
  beforeAll(() => start([order('1', 'pending', { petId: '101' }), order('2', 'shipped', { petId: '102' })]), 300_000);
  afterAll(() => close());

  it("passes, having run the known answers of exactly the registry's functions against their new versions", async () => {
    const invokedBefore = stage.fake.invoked.length;
    const { reports, value } = await runHook();
    expect(
      reports.map((report) => report.status),
      value.lines.join('\n'),
    ).toEqual(['Succeeded']);
    expect(new Set(stage.fake.invoked.slice(invokedBefore))).toEqual(new Set(names.map(arnOf)));
    const checks = value.lines.map((line) => /^\w+ +([^:]+):/.exec(line)![1]!);
    expect(checks.includes('throw-away answers 204')).toBe(names.includes('throwAway'));
    expect(checks.some((check) => check.startsWith('v2 '))).toBe(names.includes('listOrdersPaged'));
    expect(Object.keys(JSON.parse(stage.hook.environment.VERSION_ARNS!) as object).sort()).toEqual([...names].sort());
  }, 180_000);
});
