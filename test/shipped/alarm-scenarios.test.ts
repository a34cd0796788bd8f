/**
 * Every alarm of the production stack, evaluated minute by minute by the offline alarm evaluator
 * (test/lib/cloudwatch/) against the named scenarios of test/lib/alarm-scenarios/scenarios.ts: metric
 * series made of what the shipped bundles print when they answer (test/lib/alarm-scenarios/catalog.ts),
 * what Lambda and API Gateway publish of each request, and the access log through the stack's own
 * metric filters. Each scenario's must-fire alarms reach ALARM in time (a release's before CodeDeploy
 * stops watching, and they are that function's guards); every other alarm stays quiet. Where AWS's
 * documentation leaves the evaluation open, every reading is tried and each must hold. The table of
 * docs/reference/alarms.md ("What the alarms do, scenario by scenario") is generated here.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FunctionName } from '../../infra/registry.ts';
import { serviceName } from '../../infra/names.ts';
import { stages } from '../../infra/stage-config.ts';
import { buildCatalog } from '../lib/alarm-scenarios/catalog.ts';
import { type Scenario, scenarios } from '../lib/alarm-scenarios/scenarios.ts';
import { type Catalog, type Outcome, outcomes, playScenario, type StageNames } from '../lib/alarm-scenarios/simulate.ts';
import type { EvaluationModel } from '../lib/cloudwatch/alarm-evaluator.ts';
import { logicalId, repoRoot, synthApp } from '../lib/cdk.ts';
import { metricDelaySeconds, watchedSeconds } from '../lib/deployments.ts';
import type { Template } from '../lib/template.ts';

const config = stages.production;
const watchMinutes = watchedSeconds(`CodeDeployDefault.${config.deployment}`) / 60;
const delayMinutes = metricDelaySeconds / 60;
/** The readings the documentation leaves open: each scenario holds under every one. */
const models: EvaluationModel[] = (['missing-is-zero', 'missing-drops'] as const).flatMap((reading) =>
  (['complete', 'partial'] as const).map((periods) => ({ reading, periods, delayMinutes })),
);
/** Where the scenario starts within a 5-minute period: its first period holds 4 of its minutes, or 1. */
const offsets = [1, 4];
/** A minute 3 days long aligned (3-day, 6-hour, hour and 5-minute periods all start at 0), on 2026-12-04. */
const aligned = 4_320 * 6_811;
const warmUp = 60;

const { stack, template, outdir } = synthApp({ bundle: [config.stackName] });
const s = stack('production');
const t = template('production').toJSON() as Template;
const prefix = `${config.stackName}-`;

/** The alarms on-call or the team hear of: every metric alarm that notifies, and the composites (not their windows). */
const notifying = Object.values(t.Resources)
  .filter((resource) => /^AWS::CloudWatch::(Composite)?Alarm$/.test(resource.Type) && resource.Properties.AlarmActions !== undefined)
  .map((resource) => String(resource.Properties.AlarmName).slice(prefix.length));

/** Each function's deployment group's alarms, by id. */
const guardsOf = (fn: FunctionName): string[] => {
  const stored = fn === 'authorizer' ? s.authorizerFunction : s.routeFunctions.find(({ route }) => route.operation === fn)!.fn;
  const group = t.Resources[logicalId(s, stored.deploymentGroup)]!.Properties.AlarmConfiguration as { Alarms: { Name: { Ref: string } }[] };
  return group.Alarms.map(({ Name }) => String(t.Resources[Name.Ref]!.Properties.AlarmName).slice(prefix.length));
};

const stageNames = (): StageNames => {
  const described = (fn: (typeof s.routeFunctions)[number]['fn']) => {
    const functionName = `\${${logicalId(s, fn.function)}}`;
    const version = (t.Resources[logicalId(s, fn.alias)]!.Properties.FunctionVersion as { 'Fn::GetAtt': [string, string] })[
      'Fn::GetAtt'
    ][0];
    return { functionName, resource: `${functionName}:live`, newVersion: `\${${version}.Version}` };
  };
  return {
    functions: {
      authorizer: described(s.authorizerFunction),
      ...(Object.fromEntries(s.routeFunctions.map(({ route, fn }) => [route.operation, described(fn)])) as Record<
        Exclude<FunctionName, 'authorizer'>,
        ReturnType<typeof described>
      >),
    },
    canaryName: s.syntheticClient.canaryName,
    service: serviceName(config.stage),
  };
};

type Result = { readonly scenario: Scenario; readonly runs: { model: EvaluationModel; offset: number; outcomes: Map<string, Outcome> }[] };

let catalog: Catalog;
const results: Result[] = [];

beforeAll(async () => {
  catalog = await buildCatalog({ s, t, outdir });
  for (const scenario of scenarios(watchMinutes)) {
    const runs: Result['runs'] = [];
    for (const offset of offsets) {
      const span = { start: aligned + 60 + offset, warmUp };
      const store = playScenario({ template: t, names: stageNames(), catalog }, scenario, span);
      for (const model of models)
        runs.push({ model, offset, outcomes: outcomes(t, store, { ...span, minutes: scenario.minutes, settle: 0 }, model) });
    }
    results.push({ scenario, runs });
  }
}, 900_000);

/** The latest minute an alarm first went off across the readings (every reading must see it), or undefined if one never did. */
const latestFirst = (result: Result, alarm: string) => {
  const firsts = result.runs.map(({ outcomes: found }) => found.get(`${prefix}${alarm}`)?.firstAlarm);
  return firsts.includes(undefined) ? undefined : Math.max(...(firsts as number[]));
};
const everFired = (result: Result, alarm: string) =>
  result.runs.some(({ outcomes: found }) => found.get(`${prefix}${alarm}`)?.firstAlarm !== undefined);

describe.each(scenarios(watchMinutes).map((scenario) => [scenario.id, scenario] as const))('the scenario %s', (id, scenario) => {
  const result = () => results.find((candidate) => candidate.scenario.id === id)!;

  it('sets off what it must, in time, under every reading of the documentation', () => {
    for (const alarm of scenario.mustFire) {
      expect(notifying, alarm).toContain(alarm);
      const first = latestFirst(result(), alarm);
      expect(first, `${alarm}: minute it first goes off, in the latest reading`).toBeDefined();
      expect(first!).toBeLessThanOrEqual(scenario.minutes);
      // A release is stopped only by its own deployment group's guards, before CodeDeploy stops
      // watching; one whose fault shows later (`pastTheWatch`) is paged by its guard after the watch.
      if (scenario.deploy !== undefined) {
        expect(guardsOf(scenario.deploy.fn)).toContain(alarm);
        if (scenario.pastTheWatch) expect(first!).toBeGreaterThan(watchMinutes);
        else expect(first!).toBeLessThanOrEqual(watchMinutes);
      }
    }
  });

  it('leaves every other alarm quiet, before it starts as well as during it', () => {
    const allowed = new Set([...scenario.mustFire, ...(scenario.mayFire ?? [])]);
    const loud = notifying.filter((alarm) => !allowed.has(alarm) && everFired(result(), alarm));
    expect(loud).toEqual([]);
    const beforeStart = notifying.filter((alarm) =>
      result().runs.some(({ outcomes: found }) => found.get(`${prefix}${alarm}`)?.alarmedBefore),
    );
    expect(beforeStart).toEqual([]);
  });

  it('gives the same states whether a missing point counts as 0 or as none in arithmetic', () => {
    const key = (run: Result['runs'][number]) => `${run.model.periods}/${run.offset}`;
    const byReading = (reading: string) =>
      Object.fromEntries(
        result()
          .runs.filter((run) => run.model.reading === reading)
          .map((run) => [key(run), Object.fromEntries([...run.outcomes].map(([name, outcome]) => [name, outcome.firstAlarm ?? null]))]),
      );
    expect(byReading('missing-drops')).toEqual(byReading('missing-is-zero'));
  });
});

/** Whom an alarm tells: a guard of some functions' deployments (which pages too), a page, or a ticket. */
const tells = (alarm: string) => {
  const guarding = (['authorizer', 'listOrders', 'cancelOrder', 'listOrdersPaged'] as const).filter((fn) => guardsOf(fn).includes(alarm));
  if (guarding.length === 4) return 'guard (every deploy)';
  if (guarding.length > 0) return `guard (${guarding.join(', ')})`;
  const resource = Object.values(t.Resources).find((candidate) => candidate.Properties.AlarmName === `${prefix}${alarm}`)!;
  const topic = (resource.Properties.AlarmActions as { Ref: string }[])[0]!.Ref;
  return topic === logicalId(s, s.monitoring.ticketTopic) ? 'ticket' : 'page';
};

/** The table of docs/reference/alarms.md: one row per alarm, one column per scenario; a cell is the minute it went off (latest reading), or "·". */
const scenarioTable = () => {
  const header = ['alarm', 'tells', ...results.map(({ scenario }) => `\`${scenario.id}\``)];
  const rows = notifying.map((alarm) => [
    `\`${alarm}\``,
    tells(alarm),
    ...results.map((result) => {
      const first = latestFirst(result, alarm);
      const must = result.scenario.mustFire.includes(alarm);
      if (first !== undefined) return must ? `**${first} min**` : `${first} min`;
      return everFired(result, alarm) ? 'in some readings' : '·';
    }),
  ]);
  return [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
};

describe('docs/reference/alarms.md', () => {
  const page = join(repoRoot, 'docs/reference/alarms.md');
  const markers = ['<!-- alarm-scenarios:begin (generated by test/shipped/alarm-scenarios.test.ts) -->', '<!-- alarm-scenarios:end -->'];

  it('shows the scenario × alarm table as this test computes it (UPDATE_ALARM_TABLE=1 rewrites it)', () => {
    const text = readFileSync(page, 'utf8');
    const [begin, end] = markers.map((marker) => text.indexOf(marker));
    expect(begin, 'the markers of the generated table').toBeGreaterThan(-1);
    const generated = `\n${scenarioTable()}\n`;
    const current = text.slice(begin! + markers[0]!.length, end);
    if (current !== generated && process.env.UPDATE_ALARM_TABLE === '1')
      writeFileSync(page, text.slice(0, begin! + markers[0]!.length) + generated + text.slice(end));
    else expect(current).toBe(generated);
  });

  it('names each scenario with its title, in order', () => {
    const text = readFileSync(page, 'utf8');
    for (const { scenario } of results) expect(text).toContain(`\`${scenario.id}\`: ${scenario.title}`);
  });
});
