/**
 * Every alarm of the production stack, evaluated minute by minute by the offline alarm evaluator
 * (test/lib/cloudwatch/) against the named scenarios of test/lib/alarm-scenarios/scenarios.ts: metric
 * series made of what the shipped bundles print when they answer (test/lib/alarm-scenarios/catalog.ts),
 * what Lambda and API Gateway publish of each request, and the access log through the stack's own
 * metric filters. Alarms are read as CloudWatch evaluates them: once a minute over periods that end
 * then, the newest partly arrived (the sliding window); a release's invocations reach its new version
 * at random, as Lambda's weighted alias routes them, under many seeds. Each scenario's must-fire
 * alarms go off in time (a release's before CodeDeploy stops watching, and they are that function's
 * guards) in 95 % of the seeds; every other alarm stays quiet in 99 %. Where the documentation
 * leaves the evaluation open, the other reading is tried and must agree. The table of
 * docs/reference/alarms.md ("What the alarms do, scenario by scenario") is generated here.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharePeriod } from '../../infra/cdk/monitoring/guards.ts';
import type { FunctionName } from '../../infra/registry.ts';
import { serviceName } from '../../infra/names.ts';
import { stages } from '../../infra/stage-config.ts';
import { buildCatalog } from '../lib/alarm-scenarios/catalog.ts';
import { clientMoves, type Scenario, scenarios } from '../lib/alarm-scenarios/scenarios.ts';
import { invocationsPerMinute } from '../lib/alarm-scenarios/traffic.ts';
import { type Outcome, outcomesOf, scenarioStates } from '../lib/alarm-scenarios/outcomes.ts';
import { type Catalog, newShare, playBase, playSeed, type StageNames } from '../lib/alarm-scenarios/simulate.ts';
import type { EvaluationModel } from '../lib/cloudwatch/alarm-evaluator.ts';
import { logicalId, repoRoot, synthApp } from '../lib/cdk.ts';
import { metricDelaySeconds, watchedSeconds } from '../lib/deployments.ts';
import type { Template } from '../lib/template.ts';

const config = stages.production;
const watchMinutes = watchedSeconds(`CodeDeployDefault.${config.deployment}`) / 60;
/**
 * The routing's seeds each release is played under: enough for "95 %" and "99 %" to mean something
 * (a quiet alarm may go off under 1 seed of 100), few enough for the file's time (measured: 100
 * seeds of every release cost about 30 s of CPU; the catalog's runs cost more).
 */
const seeds = 100;
/** CloudWatch's evaluation: periods ending each minute, datapoints 3 minutes late (the stage's own delay). */
const clock: EvaluationModel = { reading: 'missing-is-zero', periods: 'clock', delayMinutes: metricDelaySeconds / 60 };
/**
 * What the documentation leaves open, tried on the first seed: a missing point as none in
 * arithmetic (the states must be the same), and datapoints a minute late, not three (the verdicts).
 */
const missingDrops: EvaluationModel = { ...clock, reading: 'missing-drops' };
const early: EvaluationModel = { ...clock, delayMinutes: 1 };
/** A minute 3 days long aligned (3-day, 6-hour, hour and 5-minute periods all start at 0), on 2026-12-04; the scenario starts a minute after. */
const aligned = 4_320 * 6_811;
const span = { start: aligned + 61, warmUp: 60 };

const { stack, template, outdir } = synthApp({ bundle: [config.stackName] });
const s = stack('production');
const t = template('production').toJSON() as Template;
const prefix = `${config.stackName}-`;

/** The alarms on-call or the team hear of: every metric alarm that notifies, and the composites (not their windows). */
const notifying = Object.values(t.Resources)
  .filter((resource) => /^AWS::CloudWatch::(Composite)?Alarm$/.test(resource.Type) && resource.Properties.AlarmActions !== undefined)
  .map((resource) => String(resource.Properties.AlarmName).slice(prefix.length));
const alarmProperties = (alarm: string) =>
  Object.values(t.Resources).find((resource) => resource.Properties?.AlarmName === `${prefix}${alarm}`)!.Properties;

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
  const table = (construct: typeof s.ordersTable) => `\${${logicalId(s, construct)}}`;
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
    tables: { OrdersTable: table(s.ordersTable), ApiKeysTable: table(s.apiKeysTable), ListLeasesTable: table(s.listLeasesTable) },
  };
};

/** A scenario's outcomes: per seed of the routing (one where nothing is deployed), and the first seed's under the other readings. */
type Result = {
  readonly scenario: Scenario;
  readonly seeds: Map<string, Outcome>[];
  readonly missingDrops: Map<string, Outcome>;
  readonly early: Map<string, Outcome>;
};

let catalog: Catalog;
const results: Result[] = [];

beforeAll(async () => {
  catalog = await buildCatalog({ s, t, outdir });
  const stage = { template: t, names: stageNames(), catalog };
  for (const scenario of scenarios(watchMinutes)) {
    const evaluated = { ...span, minutes: scenario.minutes, settle: 0 };
    const base = playBase(stage, scenario, span);
    const baseStates = scenarioStates(t, base, evaluated, clock);
    const played = Array.from({ length: scenario.deploy === undefined ? 1 : seeds }, (_, i) =>
      playSeed(stage, scenario, span, base, i + 1),
    );
    results.push({
      scenario,
      seeds: played.map((store) => outcomesOf(scenarioStates(t, store, evaluated, clock, baseStates), span)),
      missingDrops: outcomesOf(scenarioStates(t, played[0]!, evaluated, missingDrops), span),
      early: outcomesOf(scenarioStates(t, played[0]!, evaluated, early), span),
    });
  }
}, 900_000);

const resultOf = (id: string) => results.find((candidate) => candidate.scenario.id === id)!;
/** The minute each seed first set `alarm` off (undefined: never). */
const firsts = (result: Result, alarm: string) => result.seeds.map((found) => found.get(`${prefix}${alarm}`)?.firstAlarm);
/** The share of seeds in which `alarm` went off (by minute `within`, when given). */
const share = (result: Result, alarm: string, within: (minute: number) => boolean = () => true) =>
  firsts(result, alarm).filter((minute) => minute !== undefined && within(minute)).length / result.seeds.length;
/** The minute by which `alarm` had gone off in 95 % of the seeds, or undefined. */
const p95 = (result: Result, alarm: string) => {
  const fired = firsts(result, alarm)
    .filter((minute): minute is number => minute !== undefined)
    .sort((a, b) => a - b);
  const needed = Math.ceil(0.95 * result.seeds.length);
  return fired.length >= needed ? fired[needed - 1] : undefined;
};
/** The bound within which a must-fire alarm must go off: a release's guard before the watch ends (or after it, when its fault shows later). */
const inTime = (scenario: Scenario) => (minute: number) =>
  minute <= scenario.minutes && (scenario.deploy === undefined || (scenario.pastTheWatch ? minute > watchMinutes : minute <= watchMinutes));
const allowed = (scenario: Scenario) => new Set([...scenario.mustFire, ...(scenario.thin ?? []), ...(scenario.mayFire ?? [])]);

describe.each(scenarios(watchMinutes).map((scenario) => [scenario.id, scenario] as const))('the scenario %s', (id, scenario) => {
  it('sets off what it must, in time, in 95 % of the seeds (a guard on thin traffic in 80 %), its own guards if a release', () => {
    for (const alarm of [...scenario.mustFire, ...(scenario.thin ?? [])]) {
      expect(notifying, alarm).toContain(alarm);
      if (scenario.deploy !== undefined) expect(guardsOf(scenario.deploy.fn)).toContain(alarm);
      const least = scenario.mustFire.includes(alarm) ? 0.95 : 0.8;
      expect(share(resultOf(id), alarm, inTime(scenario)), `${alarm}: the seeds in which it went off in time`).toBeGreaterThanOrEqual(
        least,
      );
    }
  });

  it('leaves every other alarm quiet in 99 % of the seeds, and every alarm quiet before it starts', () => {
    const result = resultOf(id);
    const most = scenario.deploy === undefined ? 0 : 0.01;
    const loud = notifying.filter((alarm) => !allowed(scenario).has(alarm) && share(result, alarm) > most);
    expect(loud.map((alarm) => `${alarm} in ${Math.round(100 * share(result, alarm))} % of the seeds`)).toEqual([]);
    const beforeStart = notifying.filter((alarm) => result.seeds.some((found) => found.get(`${prefix}${alarm}`)?.alarmedBefore));
    expect(beforeStart).toEqual([]);
  });

  it('gives the same states whether a missing point counts as 0 or as none in arithmetic, and holds with datapoints a minute late', () => {
    const result = resultOf(id);
    const minutes = (found: Map<string, Outcome>) =>
      Object.fromEntries([...found].map(([name, outcome]) => [name, outcome.firstAlarm ?? null]));
    expect(minutes(result.missingDrops)).toEqual(minutes(result.seeds[0]!));
    const fired = (alarm: string) => result.early.get(`${prefix}${alarm}`)?.firstAlarm;
    for (const alarm of scenario.mustFire) expect(fired(alarm), alarm).toBeDefined();
    expect(notifying.filter((alarm) => !allowed(scenario).has(alarm) && fired(alarm) !== undefined)).toEqual([]);
  });
});

/** Whom an alarm tells: a guard of some functions' deployments (which pages too), a page, or a ticket. */
const tells = (alarm: string) => {
  const guarding = (['authorizer', 'listOrders', 'cancelOrder', 'listOrdersPaged'] as const).filter((fn) => guardsOf(fn).includes(alarm));
  if (guarding.length === 4) return 'guard (every deploy)';
  if (guarding.length > 0) return `guard (${guarding.join(', ')})`;
  const topic = (alarmProperties(alarm).AlarmActions as { Ref: string }[])[0]!.Ref;
  return topic === logicalId(s, s.monitoring.ticketTopic) ? 'ticket' : 'page';
};

/** What an alarm needs to go off, from its template: M of N periods at its threshold (a composite: both its windows). */
const needs = (alarm: string) => {
  const p = alarmProperties(alarm);
  if (p.AlarmRule !== undefined) return 'its long and short windows';
  const metrics = (p.Metrics ?? []) as { MetricStat?: { Period: number } }[];
  const seconds = Number(p.Period ?? metrics.find((metric) => metric.MetricStat !== undefined)!.MetricStat!.Period);
  const of = Number(p.EvaluationPeriods);
  const comparison = String(p.ComparisonOperator).startsWith('Less') ? '<' : '≥';
  return `${comparison} ${String(p.Threshold)} in ${String(p.DatapointsToAlarm ?? of)} of ${of} × ${seconds / 60} min`;
};

/**
 * A share guard of the function a release deploys, where the new version gets fewer answers in a
 * share period than the guard needs: its answers a minute, the synthetic client's included, times
 * CodeDeploy's 10 % and the period. Such a share means nothing there; the table says so.
 */
const thinShare = (scenario: Scenario, alarm: string): string | undefined => {
  const fn = scenario.deploy?.fn;
  const kind = /(Refused|Busy)Share$/.exec(alarm)?.[1];
  if (fn === undefined || kind === undefined || !guardsOf(fn).includes(alarm)) return undefined;
  const { minAnswers } = config.alarms[kind === 'Refused' ? 'refusedShare' : 'busyShare'];
  const answers = Math.round(invocationsPerMinute(scenario.traffic, fn) * newShare * sharePeriod.toMinutes());
  return answers < minAnswers ? `thin: ${answers} of ${minAnswers} answers` : undefined;
};

/**
 * The table of docs/reference/alarms.md: one row per alarm, what it needs and what a client can do that
 * moves it, then one column per scenario. A cell is the minute by which it went off in 95 % of the
 * seeds (with the share of seeds when not all), **bold** where the scenario requires it; the share of
 * seeds alone where fewer went off; "thin" where a release's share guard gets too few answers to mean
 * anything; `·` where it stayed quiet.
 */
const scenarioTable = () => {
  const header = ['alarm', 'tells', 'needs', 'a client moves it by', ...results.map(({ scenario }) => `\`${scenario.id}\``)];
  const percent = (value: number) => `${Math.round(100 * value)} %`;
  const cell = (result: Result, alarm: string) => {
    const fired = share(result, alarm);
    const minute = p95(result, alarm);
    const bold = (text: string) =>
      result.scenario.mustFire.includes(alarm) || result.scenario.thin?.includes(alarm) ? `**${text}**` : text;
    const thin = thinShare(result.scenario, alarm);
    if (fired === 0) return thin ?? '·';
    const shown = minute === undefined ? percent(fired) : fired < 1 ? `${minute} min (${percent(fired)})` : `${minute} min`;
    return bold(thin === undefined ? shown : `${shown}, ${thin}`);
  };
  const rows = notifying.map((alarm) => [
    `\`${alarm}\``,
    tells(alarm),
    needs(alarm),
    clientMoves(alarm),
    ...results.map((result) => cell(result, alarm)),
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
