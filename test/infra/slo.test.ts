import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contractOf } from '../../infra/registry.ts';
import { type StageName, stages } from '../../infra/stage-config.ts';
import { tableRows } from '../lib/markdown.ts';
import { logicalId, repoRoot, stageNames, sharedApp } from '../lib/cdk.ts';
import { resolve } from '../lib/template.ts';

const { template } = sharedApp();

type Props = Record<string, unknown>;
type MathMetric = {
  Id: string;
  Expression?: string;
  ReturnData?: boolean;
  MetricStat?: { Metric: { MetricName: string }; Period: number; Stat: string };
};

const operating = readFileSync(join(repoRoot, 'docs/operating.md'), 'utf8');
const runbook = readFileSync(join(repoRoot, 'docs/runbook.md'), 'utf8');

/** The operations' own objectives on a stage, as their contracts state them. */
const operationSlos = (stage: StageName) => ({
  cancelLatency: contractOf('cancelOrder').alarms.slo!.objective[stage],
  listFirstByte: contractOf('listOrders').alarms.slo!.objective[stage],
});

describe.each(stageNames)('the %s SLO burn-rate alarms', (stage) => {
  const t = template(stage).toJSON() as { Resources: Record<string, { Type: string; Properties: Props }> };
  const prefix = `StoreOrders-${stage}-`;
  const metricAlarms = Object.entries(t.Resources).filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm');
  const composites = Object.entries(t.Resources).filter(([, r]) => r.Type === 'AWS::CloudWatch::CompositeAlarm');
  const s = sharedApp().stack(stage);
  const topics = { page: logicalId(s, s.monitoring.alarmTopic), ticket: logicalId(s, s.monitoring.ticketTopic) };
  const windowOf = (logicalId: string) => t.Resources[logicalId]!.Properties;
  /** Each composite alarm with its two window alarms, read from its rule. */
  const tiers = composites.map(([, { Properties: p }]) => {
    const rule = String(resolve(p.AlarmRule));
    const [long, short] = [...rule.matchAll(/ALARM\("\$\{(\w+)\.Arn\}"\)/g)].map((match) => windowOf(match[1]!));
    return { id: String(p.AlarmName).slice(prefix.length), props: p, rule, long: long!, short: short! };
  });
  const periodOf = (alarm: Props) =>
    Math.max(...(alarm.Metrics as MathMetric[]).flatMap((m) => (m.MetricStat ? [m.MetricStat.Period] : [])));
  const expressionOf = (alarm: Props) => (alarm.Metrics as MathMetric[]).find((m) => m.ReturnData !== false && m.Expression)!.Expression!;

  it('pairs a long and a short window for each SLO and tier: both must burn at the same rate, and only the pair notifies, a page or a ticket', () => {
    expect(tiers.length).toBe(9);
    for (const tier of tiers) {
      expect(tier.rule).toMatch(/^\(ALARM\(.*\) AND ALARM\(.*\)\)$/);
      // A slow burn is a ticket, in the SRE workbook's terms: the ticket topic, read the next working day.
      const topic = tier.id.endsWith('SlowBurn') ? topics.ticket : topics.page;
      expect(String(tier.props.AlarmDescription).startsWith(tier.id.endsWith('SlowBurn') ? 'Ticket' : 'Page')).toBe(true);
      expect(tier.props).toMatchObject({ AlarmActions: [{ Ref: topic }], OKActions: [{ Ref: topic }] });
      expect(tier.props.AlarmDescription).toContain(`docs/runbook.md, section "${tier.id}"`);
      for (const window of [tier.long, tier.short]) {
        expect(window.AlarmActions).toBeUndefined();
        expect(window.OKActions).toBeUndefined();
        expect(window).toMatchObject({
          EvaluationPeriods: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'notBreaching',
        });
      }
      expect(tier.long.Threshold).toBe(tier.short.Threshold);
      // The workbook's short window is a twelfth of the long one (5 minutes for an hour).
      expect(periodOf(tier.long)).toBe(12 * periodOf(tier.short));
      // CloudWatch allows at most 7 days of evaluation range for a period of an hour or more, 1 day below.
      expect(periodOf(tier.long)).toBeLessThanOrEqual(7 * 86_400);
    }
    // Every window alarm belongs to one pair.
    expect(metricAlarms.filter(([, r]) => /Burn(Long|Short)$/.test(String(r.Properties.AlarmName)))).toHaveLength(18);
  });

  it('spends the error budget of the target the stage and the operations configure: bad fraction over (1 − target)', () => {
    const { slo } = stages[stage].alarms;
    const { cancelLatency, listFirstByte } = operationSlos(stage);
    const budgets: Record<string, number> = {
      Availability: 1 - slo.availabilityPercent / 100,
      CancelLatency: 1 - cancelLatency.percent / 100,
      ListFirstByte: 1 - listFirstByte.percent / 100,
    };
    for (const tier of tiers) {
      const sloId = tier.id.replace(/(Fast|Medium|Slow)Burn$/, '');
      const divisor = Number(/\/ ([\d.]+)$/.exec(expressionOf(tier.long))![1]);
      expect(divisor).toBeCloseTo(budgets[sloId]!, 9);
    }
    const good = (id: string) =>
      (tiers.find((tier) => tier.id === id)!.long.Metrics as MathMetric[]).find((m) => m.Id === 'good')!.MetricStat!;
    // Good events of a latency SLO: the percentile rank of the threshold (the % of requests at or under it).
    expect(good('CancelLatencyFastBurn')).toMatchObject({
      Stat: `PR(:${cancelLatency.thresholdMs})`,
      Metric: { MetricName: 'Latency' },
    });
    expect(good('ListFirstByteFastBurn')).toMatchObject({
      Stat: `PR(:${listFirstByte.thresholdMs})`,
      Metric: { MetricName: 'ListFirstByte' },
    });
  });

  it('states each SLO in docs/operating.md as the template has it, and each tier with its windows and burn rate', () => {
    const rows = tableRows(operating, 'SLO');
    const { slo } = stages[stage].alarms;
    const { cancelLatency, listFirstByte } = operationSlos(stage);
    const column = stage === 'staging' ? 1 : 2;
    const cell = (name: string) => rows.find(([first]) => first!.includes(`\`${name}\``))?.[column];
    expect(cell('Availability')).toBe(`${slo.availabilityPercent} %`);
    expect(cell('CancelLatency')).toBe(`${cancelLatency.percent} % ≤ ${cancelLatency.thresholdMs} ms`);
    expect(cell('ListFirstByte')).toBe(`${listFirstByte.percent} % ≤ ${listFirstByte.thresholdMs} ms`);
    const tierRows = tableRows(operating, 'burn tier');
    const duration = (seconds: number) =>
      seconds >= 86_400 ? `${seconds / 86_400} d` : seconds >= 3600 ? `${seconds / 3600} h` : `${seconds / 60} min`;
    for (const tier of tiers.filter((candidate) => candidate.id.startsWith('Availability'))) {
      const name = tier.id.replace('Availability', '');
      const row = tierRows.find(([first]) => first === `\`…${name}\``);
      expect(row, name).toBeDefined();
      expect(row!.slice(1, 4)).toEqual([duration(periodOf(tier.long)), duration(periodOf(tier.short)), String(tier.long.Threshold)]);
      expect(row![4]).toBe(String(tier.props.AlarmDescription).startsWith('Page') ? 'pages' : 'ticket');
    }
  });

  it('has a runbook section for each burn-rate alarm', () => {
    for (const tier of tiers) expect(runbook).toMatch(new RegExp(`^### ${tier.id}$`, 'm'));
  });

  it("shows each SLO's remaining error budget over 30 days on the dashboard", () => {
    const dashboard = Object.values(t.Resources).find((r) => r.Type === 'AWS::CloudWatch::Dashboard')!;
    const body = JSON.parse(String(resolve(dashboard.Properties.DashboardBody))) as {
      widgets: { properties: { title?: string; start?: string; setPeriodToTimeRange?: boolean; metrics?: unknown[][] } }[];
    };
    const budgets = body.widgets.filter((w) => w.properties.title?.endsWith('error budget left (30 days)'));
    expect(budgets.map((w) => w.properties.title!.split(':')[0])).toEqual(['Availability', 'CancelLatency', 'ListFirstByte']);
    for (const widget of budgets) {
      expect(widget.properties).toMatchObject({ start: '-P30D', setPeriodToTimeRange: true });
      expect(JSON.stringify(widget.properties.metrics)).toContain('100 * (1 - (');
    }
  });
});
