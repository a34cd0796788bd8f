/**
 * The alarm scenarios' player (test/lib/alarm-scenarios/simulate.ts) runs the synthetic client as
 * functions/canary/smoke-check.ts does: a busy answer (429, or 503 with Retry-After) is waited out
 * and asked again, each try routed again by CodeDeploy's weight; a run fails only on a wrong answer
 * that is not busy, and counts the checks busy at every try in ProbeBusy.
 */
import { describe, expect, it } from 'vitest';
import { mostBusyTries } from '../../functions/canary/smoke-check.ts';
import type { FunctionName } from '../../infra/registry.ts';
import { metricNames, probeMetricsNamespace } from '../../shared/observability.ts';
import type { FunctionRun } from '../lib/alarm-scenarios/emissions.ts';
import { type RunName, runs, type Scenario } from '../lib/alarm-scenarios/scenarios.ts';
import { type Catalog, type Played, playScenario, probeCheck, type StageNames } from '../lib/alarm-scenarios/simulate.ts';
import type { Template } from '../lib/template.ts';

const answer = (status: number, retryAfterSeconds?: number): FunctionRun => ({
  emf: [],
  status,
  failed: false,
  durationMs: 10,
  ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
});

/** `ask` answering from `answers` in turn, counting its calls. */
const asking = (answers: Played[]) => {
  let calls = 0;
  return { ask: () => answers[Math.min(calls++, answers.length - 1)]!, calls: () => calls };
};
const busy = (retryAfterSeconds?: number): Played => ({ datums: [], answeredWrongly: true, busy: { retryAfterSeconds } });
const right: Played = { datums: [], answeredWrongly: false };
const wrong: Played = { datums: [], answeredWrongly: true };

describe("one check of the synthetic client (the player's probeCheck)", () => {
  it('asks again after a busy answer and passes when a later try is answered rightly', () => {
    const check = asking([busy(1), busy(1), right]);
    expect(probeCheck(check.ask).outcome).toBe('pass');
    expect(check.calls()).toBe(3);
  });

  it('fails only on a wrong answer that is not busy', () => {
    expect(probeCheck(asking([busy(1), wrong]).ask).outcome).toBe('fail');
    expect(probeCheck(asking([wrong]).ask).outcome).toBe('fail');
  });

  it("is BUSY after the smoke check's most tries, every one busy", () => {
    const check = asking([busy(1)]);
    expect(probeCheck(check.ask).outcome).toBe('busy');
    expect(check.calls()).toBe(mostBusyTries);
  });

  it('is BUSY at once when Retry-After is longer than the client waits', () => {
    const check = asking([busy(60), right]);
    expect(probeCheck(check.ask).outcome).toBe('busy');
    expect(check.calls()).toBe(1);
  });
});

/** A stage of four functions with no metric filters: only what the functions and Lambda publish counts here. */
const template: Template = {
  Resources: {
    Api: { Type: 'AWS::ApiGateway::RestApi', Properties: { Name: 'api' } },
    Stage: {
      Type: 'AWS::ApiGateway::Stage',
      Properties: {
        StageName: 'production',
        AccessLogSetting: { Format: '{"status":"$context.status"}', DestinationArn: { 'Fn::GetAtt': ['AccessLogs', 'Arn'] } },
      },
    },
  },
};
const fn = (name: string) => ({ functionName: name, resource: `${name}:live`, newVersion: '2' });
const names: StageNames = {
  functions: { authorizer: fn('a'), listOrders: fn('l'), cancelOrder: fn('c'), listOrdersPaged: fn('p') } as Record<
    FunctionName,
    ReturnType<typeof fn>
  >,
  canaryName: 'canary',
  service: 'store-orders-production',
};
const good = Object.fromEntries(
  (Object.keys(runs) as RunName[]).map((run) => [run, answer(run.startsWith('cancel') ? 204 : 200)]),
) as Record<RunName, FunctionRun>;

/** A cancel release whose every cancel answers 503 with Retry-After, at 10 % for 30 minutes, with only the synthetic client running. */
const played = (broken: FunctionRun) => {
  const catalog: Catalog = { good, broken: { cancelUnavailable: { 'cancel-pending': broken, 'cancel-missing': broken } } };
  const scenario: Scenario = {
    id: 'test',
    title: 'test',
    minutes: 30,
    traffic: [],
    deploy: { fn: 'cancelOrder', fault: 'cancelUnavailable' },
    probes: true,
    mustFire: [],
  };
  const store = playScenario({ template, names, catalog }, scenario, { start: 100, warmUp: 0 });
  const values = (namespace: string, name: string, dimensions: Record<string, string>) =>
    store.samples({ namespace, name, dimensions }, 100, 129).flatMap(([value, count]) => Array<number>(count).fill(value));
  return {
    success: values('CloudWatchSynthetics', 'SuccessPercent', { CanaryName: 'canary' }),
    probeBusy: values(probeMetricsNamespace, metricNames.probeBusy, { service: names.service }),
    newInvocations: values('AWS/Lambda', 'Invocations', { FunctionName: 'c', Resource: 'c:live', ExecutedVersion: '2' }),
  };
};

describe('the synthetic client in a scenario', () => {
  it('passes every run when its cancels meet a 503 with Retry-After from a version at 10 %: the retry meets the old one', () => {
    const { success, probeBusy, newInvocations } = played(answer(503, 1));
    // The new version was asked, and answered busy: the checks were retried, not failed.
    expect(newInvocations.length).toBeGreaterThan(0);
    expect(success).toEqual(Array<number>(30).fill(100));
    expect(probeBusy).toEqual(Array<number>(30).fill(0));
  });

  it('fails the runs that meet a wrong answer that is not busy (a 409 from the new version)', () => {
    const { success, probeBusy } = played(answer(409));
    expect(success).toContain(0);
    expect(probeBusy).toEqual(Array<number>(30).fill(0));
  });

  it('counts a check BUSY in ProbeBusy when its Retry-After is longer than the client waits', () => {
    const { success, probeBusy } = played(answer(503, 60));
    expect(success).toEqual(Array<number>(30).fill(100));
    expect(probeBusy.filter((value) => value > 0).length).toBeGreaterThan(0);
  });
});
