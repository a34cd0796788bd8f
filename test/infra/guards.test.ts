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
import { refusedShareExpression } from '../../infra/cdk/monitoring/guards.ts';
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

  it("judge a refused share against the old version's at the same time, never a count of refusals", () => {
    const { points, minAnswers } = stages[stage].alarms.refusedShare;
    const shares = Object.values(resources).filter(
      (resource) => resource.Type === 'AWS::CloudWatch::Alarm' && String(resource.Properties.AlarmName).endsWith('RefusedShare'),
    );
    expect(shares).toHaveLength(functions.length);
    for (const share of shares) {
      expect(share.Properties).toMatchObject({
        Threshold: points,
        EvaluationPeriods: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      const expression = (share.Properties.Metrics as { Expression?: string }[]).find(
        (metric) => metric.Expression !== undefined,
      )!.Expression;
      expect(expression).toBe(refusedShareExpression(minAnswers));
    }
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
 * The chance that a good new version's refused share exceeds the old one's by `points` in one
 * 5-minute period, when clients send refusable requests at share `p` (whatever they are: wrong
 * keys, unknown orders, a flood of them) and CodeDeploy sends `weight` of them to the new version,
 * `answers` to the new one: both shares binomial, the old one's from the rest.
 */
export const falseAlarmChance = (p: number, answers: number, weight: number, points: number) => {
  const older = Math.round((answers * (1 - weight)) / weight);
  const newer = binomial(answers, p);
  const old = binomial(older, p);
  let chance = 0;
  for (let x = 0; x <= answers; x++)
    for (let y = 0; y <= older; y++) if ((100 * x) / answers - (100 * y) / older >= points) chance += newer[x]! * old[y]!;
  return chance;
};

describe('RefusedShare against clients who send what they like', () => {
  it.each(stageNames)(
    'stays under half a percent a period on %s, whatever share of refusable requests clients send, at the fewest answers judged',
    (stage) => {
      const { points, minAnswers } = stages[stage].alarms.refusedShare;
      const worst = Math.max(...Array.from({ length: 101 }, (_, i) => falseAlarmChance(i / 100, minAnswers, 0.1, points)));
      expect(worst).toBeLessThan(0.005);
      // More answers only make it rarer.
      expect(Math.max(...Array.from({ length: 101 }, (_, i) => falseAlarmChance(i / 100, 2 * minAnswers, 0.1, points)))).toBeLessThan(
        worst,
      );
    },
  );

  it('goes off for a new version refusing everything while the old one refuses under half', () => {
    expect(falseAlarmChance(0.3, 10, 0.1, 50)).toBeLessThan(0.01);
    // A version refusing all (p = 1 for it) against an old one refusing 30 %: 100 − 30 = 70 ≥ 50.
    expect(100 - 30).toBeGreaterThanOrEqual(stages.production.alarms.refusedShare.points);
  });
});
