/**
 * The guards of each function's deploys judge its new version alone: every metric a deployment
 * group's alarm reads is of that function's live version (Lambda's ExecutedVersion metrics, the
 * function's own per-version records), of that function's versions together (the old version is
 * all less the new), or the synthetic client's; nothing a client can move by sending requests:
 * no API Gateway metric, no access-log count, no refused-key count. And each guard is updated
 * before the alias whose shift it watches.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stages } from '../../infra/stage-config.ts';
import { newerShareExpression, newSharedPeriod, sharePeriod } from '../../infra/cdk/monitoring/guards.ts';
import { failingMinutesRule } from '../../infra/cdk/monitoring/metrics.ts';
import { metricNames } from '../../shared/observability.ts';
import { logicalId, repoRoot, stageNames, sharedApp } from '../lib/cdk.ts';
import { resolve } from '../lib/template.ts';

const { stack, template } = sharedApp();

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] };
type Read = { namespace: string; name: string; dimensions: Record<string, string> };

/** The metrics an alarm reads, its dimensions as the template names them (`${Ref}` placeholders). */
const metricsOf = (alarm: Record<string, unknown>): Read[] => {
  const dims = (list: unknown) =>
    Object.fromEntries(((list ?? []) as { Name: string; Value: unknown }[]).map(({ Name, Value }) => [Name, String(resolve(Value))]));
  if (alarm.MetricName !== undefined)
    return [{ namespace: String(alarm.Namespace), name: String(alarm.MetricName), dimensions: dims(alarm.Dimensions) }];
  return ((alarm.Metrics ?? []) as { MetricStat?: { Metric: Record<string, unknown> } }[]).flatMap(({ MetricStat }) =>
    MetricStat === undefined
      ? []
      : [
          {
            namespace: String(MetricStat.Metric.Namespace),
            name: String(MetricStat.Metric.MetricName),
            dimensions: dims(MetricStat.Metric.Dimensions),
          },
        ],
  );
};

describe.each(stageNames)('the guards of %s', (stage) => {
  const s = stack(stage);
  const resources = template(stage).toJSON().Resources as Record<string, Resource>;
  const functions = [
    { id: 'authorizer', fn: s.authorizerFunction },
    ...s.routeFunctions.map(({ route, fn }) => ({ id: route.operation as string, fn })),
  ];

  it.each(functions.map(({ id }) => id))(
    "of %s read only its live version's signals, its versions together, and the synthetic client",
    (id) => {
      const fn = functions.find((candidate) => candidate.id === id)!.fn;
      const functionName = `\${${logicalId(s, fn.function)}}`;
      const alias = resources[logicalId(s, fn.alias)]!;
      const live = `\${${(alias.Properties.FunctionVersion as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0]}.Version}`;
      const group = resources[logicalId(s, fn.deploymentGroup)]!.Properties.AlarmConfiguration as { Alarms: { Name: { Ref: string } }[] };
      const reads = group.Alarms.flatMap(({ Name }) =>
        metricsOf(resources[Name.Ref]!.Properties).map((read) => ({ alarm: Name.Ref, ...read })),
      );
      expect(reads.length).toBeGreaterThan(0);
      const judged = (read: Read) => {
        if (read.namespace === 'AWS/Lambda')
          return read.dimensions.FunctionName === functionName && read.dimensions.ExecutedVersion === live;
        if (read.namespace === 'StoreOrders') return read.dimensions.function === id && (read.dimensions.version ?? live) === live;
        return read.namespace === 'CloudWatchSynthetics' && read.name === 'SuccessPercent';
      };
      expect(reads.filter((read) => !judged(read))).toEqual([]);
      // Updated before the alias moves: CloudFormation updates a resource after those it depends on.
      expect(alias.DependsOn).toEqual(expect.arrayContaining(group.Alarms.map(({ Name }) => Name.Ref)));
    },
  );

  it("judge a refused share against the old version's at the same time, never a count of refusals, over two periods", () => {
    const { points, minAnswers } = stages[stage].alarms.refusedShare;
    const shares = Object.values(resources).filter(
      (resource) => resource.Type === 'AWS::CloudWatch::Alarm' && String(resource.Properties.AlarmName).endsWith('RefusedShare'),
    );
    expect(shares).toHaveLength(functions.length);
    for (const share of shares) {
      // Two 10-minute periods, one enough: never the newest, partly arrived one alone (the FILL entry of the User Guide).
      expect(share.Properties).toMatchObject({
        Threshold: points,
        EvaluationPeriods: 2,
        DatapointsToAlarm: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      const periods = (share.Properties.Metrics as { MetricStat?: { Period: number } }[]).flatMap(
        ({ MetricStat }) => MetricStat?.Period ?? [],
      );
      expect(new Set(periods)).toEqual(new Set([sharePeriod.toSeconds()]));
      const expression = (share.Properties.Metrics as { Expression?: string }[]).find(
        (metric) => metric.Expression !== undefined,
      )!.Expression;
      expect(expression).toBe(newerShareExpression(minAnswers, 'refused'));
    }
  });

  it("judge each route's busy share against the old version's at the same time; the authorizer has no busy answer", () => {
    const { points, minAnswers } = stages[stage].alarms.busyShare;
    const shares = Object.values(resources).filter(
      (resource) => resource.Type === 'AWS::CloudWatch::Alarm' && String(resource.Properties.AlarmName).endsWith('BusyShare'),
    );
    expect(shares.map((share) => String(share.Properties.AlarmName).split('-').at(-1)).sort()).toEqual(
      s.routeFunctions.map(({ name }) => `${name}BusyShare`).sort(),
    );
    for (const share of shares) {
      expect(share.Properties).toMatchObject({
        Threshold: points,
        EvaluationPeriods: 2,
        DatapointsToAlarm: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      const metrics = share.Properties.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string } } }[];
      expect(metrics.find((metric) => metric.Expression !== undefined)!.Expression).toBe(newerShareExpression(minAnswers, 'busy'));
      expect(metrics.filter((metric) => metric.MetricStat).map((metric) => [metric.Id, metric.MetricStat!.Metric.MetricName])).toEqual(
        expect.arrayContaining([
          ['busyNew', metricNames.busy],
          ['answersNew', metricNames.busy],
          ['busyAll', metricNames.busy],
          ['answersAll', metricNames.busy],
        ]),
      );
    }
  });

  it('count failures in minutes: one failure, or one burst within a minute, never sets a guard off; two failing minutes in ten do', () => {
    const errors = Object.values(resources).filter((resource) =>
      /-(ListOrders|CancelOrder|ListOrdersPaged|Authorizer)Errors$/.test(String(resource.Properties.AlarmName)),
    );
    expect(errors).toHaveLength(functions.length);
    for (const alarm of errors) {
      expect(alarm.Properties).toMatchObject({
        Threshold: 1,
        EvaluationPeriods: failingMinutesRule.of,
        DatapointsToAlarm: failingMinutesRule.failing,
      });
      const periods = (alarm.Properties.Metrics as { MetricStat?: { Period: number } }[]).flatMap(
        ({ MetricStat }) => MetricStat?.Period ?? [],
      );
      expect(new Set(periods)).toEqual(new Set([60]));
    }
  });

  it("count a list that ran its maximum duration as the list's failure, and subtract only what its clients did", () => {
    const errors = Object.values(resources).find((resource) => String(resource.Properties.AlarmName).endsWith('-ListOrdersErrors'))!;
    const metrics = errors.Properties.Metrics as { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string } } }[];
    const expression = metrics.find((metric) => metric.Expression !== undefined)!.Expression!;
    const named = Object.fromEntries(metrics.filter((m) => m.MetricStat).map((m) => [m.Id, m.MetricStat!.Metric.MetricName]));
    expect(named).toMatchObject({
      cut: metricNames.stalledListsCut,
      left: metricNames.listsLeftEarly,
      tooLong: metricNames.listsRanTooLong,
    });
    expect(expression).toMatch(/ \+ FILL\(tooLong, 0\)$/);
    expect(expression).not.toMatch(/- FILL\(tooLong/);
  });
});

/** P(X = k) for X binomial(n, p). */
const binomial = (n: number, p: number) => {
  const pmf: number[] = [];
  let coefficient = 1;
  for (let k = 0; k <= n; k++) {
    pmf.push(coefficient * p ** k * (1 - p) ** (n - k));
    coefficient = (coefficient * (n - k)) / (k + 1);
  }
  return pmf;
};

/**
 * The chance that the new version's refused share exceeds the old one's by `points` in one 5-minute
 * period, when the new version refuses each answer with chance `refusedNew`, the old with
 * `refusedOld`, and CodeDeploy sends `weight` of the invocations to the new one, `answers` of them:
 * both shares binomial, the old one's from the rest. A good release: both alike, whatever clients
 * send (wrong keys, unknown orders, a flood of them).
 */
export const alarmChance = (refusedNew: number, refusedOld: number, answers: number, weight: number, points: number) => {
  const older = Math.round((answers * (1 - weight)) / weight);
  const newer = binomial(answers, refusedNew);
  const old = binomial(older, refusedOld);
  let chance = 0;
  for (let x = 0; x <= answers; x++)
    for (let y = 0; y <= older; y++) if ((100 * x) / answers - (100 * y) / older >= points) chance += newer[x]! * old[y]!;
  return chance;
};

describe('RefusedShare against clients who send what they like', () => {
  const worstOver = (answers: number, points: number) =>
    Math.max(...Array.from({ length: 101 }, (_, i) => alarmChance(i / 100, i / 100, answers, 0.1, points)));

  it.each(stageNames)(
    'goes off for a good release on %s in at most 0.2 percent of the periods it judges, whatever share of refusable requests clients send',
    (stage) => {
      const { points, minAnswers } = stages[stage].alarms.refusedShare;
      const worst = worstOver(minAnswers, points);
      expect(worst).toBeLessThan(0.002);
      // More answers only make it rarer.
      expect(worstOver(2 * minAnswers, points)).toBeLessThan(worst);
      // The figure docs/reference/alarms.md states ("What the guards see").
      const page = readFileSync(join(repoRoot, 'docs/reference/alarms.md'), 'utf8');
      expect(page).toContain(`at most ${(100 * worst).toFixed(2)} % of the periods it judges`);
    },
  );

  it('judges a period only when the new version gave 3/4 of its share of it, so clients changing at the shift move it by a quarter of the change at most', () => {
    // A period judged holds at least newSharedPeriod / 10 % of its answers from after the shift; the rest,
    // from before, is all the old version's share can differ by from the new one's for clients alone.
    const fromBefore = 1 - newSharedPeriod / 0.1;
    expect(fromBefore).toBeCloseTo(0.25);
    // Clients turning every answer from accepted to refused at the shift (100 points) stay under the threshold.
    expect(100 * fromBefore).toBeLessThan(stages.production.alarms.refusedShare.points);
  });

  it.each(stageNames)(
    'BusyShare, the same test, goes off for a good release on %s in at most 0.2 percent of 5-minute periods, whatever the load',
    (stage) => {
      // Capacity is shared and CodeDeploy routes by weight: load makes both versions busy with the same chance.
      const { points, minAnswers } = stages[stage].alarms.busyShare;
      expect(worstOver(minAnswers, points)).toBeLessThan(0.002);
    },
  );

  it('BusyShare goes off, nearly surely, for a release busy where the old version is not', () => {
    const { points, minAnswers } = stages.production.alarms.busyShare;
    // A cancel answering 503 for every request (its DynamoDB client pointing nowhere) on a calm day.
    expect(alarmChance(1, 0.01, minAnswers, 0.1, points)).toBeGreaterThan(0.99);
    // A list finding every key's slots full while a third of the old version's lists are refused so.
    expect(alarmChance(1, 0.33, minAnswers, 0.1, points)).toBeGreaterThan(0.99);
  });

  it('goes off, nearly surely, for a release refusing what the old version accepts', () => {
    const { points, minAnswers } = stages.production.alarms.refusedShare;
    // A cancel answering 409 for pending orders (nearly all its answers) against one refusing a tenth.
    expect(alarmChance(0.95, 0.1, minAnswers, 0.1, points)).toBeGreaterThan(0.99);
    // An authorizer denying every key against one refusing the wrong keys of a busy day (a third).
    expect(alarmChance(1, 0.33, minAnswers, 0.1, points)).toBeGreaterThan(0.99);
  });
});
