/**
 * The offline alarm evaluator's semantics (test/lib/cloudwatch/), case by case against the
 * examples of CloudWatch's User Guide: "Using Amazon CloudWatch alarms" (evaluation, missing data),
 * "Metric math syntax and functions" (comparison and logical operators, IF, FILL, division by zero).
 */
import { describe, expect, it } from 'vitest';
import { type AlarmState, type MetricAlarmModel, metricAlarmModel, seriesAt, stateFrom } from '../lib/cloudwatch/alarm-evaluator.ts';
import { ruleHolds, timeline } from '../lib/cloudwatch/alarm-timeline.ts';
import { evaluateExpression, type MissingReading, type Series } from '../lib/cloudwatch/metric-math.ts';
import { MetricStore, statistic } from '../lib/cloudwatch/metric-store.ts';

/** "0 - X - X" → [0, undefined, 1, undefined, 1], against a threshold of 1 (X breaches it, 0 does not). */
const points = (text: string): Series => text.split(' ').map((p) => (p === '-' ? undefined : p === 'X' ? 1 : 0));
const rule = (n: number, m: number, treatMissingData: MetricAlarmModel['treatMissingData']) => ({
  evaluationPeriods: n,
  datapointsToAlarm: m,
  threshold: 1,
  comparison: 'GreaterThanOrEqualToThreshold',
  treatMissingData,
});

describe('an alarm with data missing, as the guide\'s tables ("How alarm state is evaluated when data is missing")', () => {
  // Datapoints to Alarm and Evaluation Periods 3; the evaluation range holds 5.
  it.each([
    ['0 - X - X', 'OK', 'OK'],
    ['0 - - - -', 'OK', 'OK'],
    ['- - - - -', 'ALARM', 'OK'],
    ['0 X X - X', 'ALARM', 'ALARM'],
    ['- - - - X', 'ALARM', 'OK'],
    ['X - - - -', 'ALARM', 'OK'],
  ])('3 of 3: %s is %s when missing data breaches, %s when it does not', (data, breaching, notBreaching) => {
    expect(stateFrom(points(data), rule(3, 3, 'breaching'), 'OK')).toBe(breaching);
    expect(stateFrom(points(data), rule(3, 3, 'notBreaching'), 'ALARM')).toBe(notBreaching);
  });

  it.each([
    ['0 - X - X', 'ALARM', 'ALARM'],
    ['0 0 X 0 X', 'ALARM', 'ALARM'],
    ['0 - X - -', 'ALARM', 'OK'],
    ['- - - - 0', 'ALARM', 'OK'],
    ['- - - - X', 'ALARM', 'OK'],
  ])('2 of 3: %s is %s when missing data breaches, %s when it does not', (data, breaching, notBreaching) => {
    expect(stateFrom(points(data), rule(3, 2, 'breaching'), 'OK')).toBe(breaching);
    expect(stateFrom(points(data), rule(3, 2, 'notBreaching'), 'ALARM')).toBe(notBreaching);
  });

  it('keeps its state when all is missing and missing data is ignored, and has too little data when it is missing', () => {
    for (const previous of ['OK', 'ALARM'] as AlarmState[])
      expect(stateFrom(points('- - - - -'), rule(3, 3, 'ignore'), previous)).toBe(previous);
    expect(stateFrom(points('- - - - -'), rule(3, 3, 'missing'), 'OK')).toBe('INSUFFICIENT_DATA');
    // Enough real datapoints: the treatment is not needed (the guide's fourth row, every column ALARM).
    expect(stateFrom(points('0 X X - X'), rule(3, 3, 'ignore'), 'OK')).toBe('ALARM');
    expect(stateFrom(points('0 - - - -'), rule(3, 3, 'ignore'), 'ALARM')).toBe('OK');
  });

  it('refuses to guess where ignored or missing datapoints would decide (the guide gives no rule for it)', () => {
    expect(() => stateFrom(points('- - - - X'), rule(3, 3, 'ignore'), 'OK')).toThrow(/not modelled/);
    expect(() => stateFrom(points('0 - X - -'), rule(3, 2, 'missing'), 'OK')).toThrow(/not modelled/);
  });
});

describe('metric math, as the guide states it', () => {
  const evaluate = (expression: string, series: Record<string, Series>, reading: MissingReading = 'missing-is-zero') =>
    evaluateExpression(expression, { length: Object.values(series)[0]!.length, lookup: (id) => series[id]!, reading });
  const table = { metric1: [30, 20, 0, 0], metric2: [20, undefined, 20, undefined] };

  it("compares two series treating the point only one has as 0, and combines comparisons with AND (the guide's table)", () => {
    expect(evaluate('(metric1 < metric2)', table)).toEqual([0, 0, 1, 0]);
    expect(evaluate('(metric1 >= 30)', table)).toEqual([1, 0, 0, 0]);
    expect(evaluate('(metric1 > 15 AND metric2 > 15)', table)).toEqual([1, 0, 0, 0]);
  });

  it('chooses with IF point by point, as each of its documented forms', () => {
    const series = { metric1: [1, 1, 0, 0, undefined], metric2: [30, undefined, 0, 0, 30], metric3: [0, 0, 20, undefined, 20] };
    expect(evaluate('IF(metric1, metric2, metric3)', series)).toEqual([30, 0, 20, undefined, undefined]);
    expect(evaluate('IF(metric1, 5, metric3)', series)).toEqual([5, 5, 20, undefined, undefined]);
    expect(evaluate('IF(metric1, metric2, 5)', series)).toEqual([30, 0, 5, 5, undefined]);
    expect(evaluate('IF(metric1, metric2)', series)).toEqual([30, 0, undefined, undefined, undefined]);
  });

  it('fills missing points, drops a point divided by zero, and keeps a missing point missing against a number', () => {
    const series = { a: [4, undefined, 6], b: [2, 0, undefined] };
    expect(evaluate('FILL(a, 0)', series)).toEqual([4, 0, 6]);
    expect(evaluate('a / b', series, 'missing-drops')).toEqual([2, undefined, undefined]);
    expect(evaluate('100 * a', series)).toEqual([400, undefined, 600]);
    expect(evaluate('-a + 1', series)).toEqual([-3, undefined, -5]);
  });

  it('adds two series with a point only one has either as 0 (the guide) or as no point (the toolchain notes): both readings', () => {
    const series = { a: [1, undefined, 3], b: [10, 20, undefined] };
    expect(evaluate('a + b', series, 'missing-is-zero')).toEqual([11, 20, 3]);
    expect(evaluate('a + b', series, 'missing-drops')).toEqual([11, undefined, undefined]);
    expect(evaluate('FILL(a, 0) + FILL(b, 0)', series, 'missing-drops')).toEqual([11, 20, 3]);
  });

  it('refuses a function it does not model', () => {
    expect(() => evaluate('RATE(a)', { a: [1] })).toThrow(/RATE is not modelled/);
  });
});

describe('statistics of a period', () => {
  it('sums, counts and averages values published several times, ranks percentiles by nearest rank', () => {
    const samples: [number, number][] = [
      [1, 3],
      [0, 7],
    ];
    expect([statistic('Sum', samples), statistic('SampleCount', samples), statistic('Average', samples)]).toEqual([3, 10, 0.3]);
    // Fewer than 100 values: the p99 is the largest.
    expect(
      statistic('p99', [
        [120, 40],
        [2500, 1],
      ]),
    ).toBe(2500);
    expect(
      statistic('p50', [
        [120, 40],
        [2500, 1],
      ]),
    ).toBe(120);
    // PR(:t): the share (%) of values at or below t.
    expect(
      statistic('PR(:1500)', [
        [120, 3],
        [2500, 1],
      ]),
    ).toBe(75);
    expect(statistic('Sum', [])).toBeUndefined();
  });
});

describe('an alarm evaluated minute by minute', () => {
  const metric = { namespace: 'Test', name: 'Errors', dimensions: { service: 's' } };
  const alarm = (props: Record<string, unknown> = {}) =>
    metricAlarmModel('A', {
      AlarmName: 'a',
      Namespace: 'Test',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'service', Value: 's' }],
      Statistic: 'Sum',
      Period: 300,
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      ...props,
    });

  it('sees a 5-minute period once it has ended and its data arrived, or, counting the newest period as it fills, as soon as the data arrives', () => {
    const store = new MetricStore();
    store.add(12, { ...metric, value: 1 });
    const at = (t: number, periods: 'complete' | 'partial') =>
      seriesAt(alarm(), store, t, { reading: 'missing-is-zero', periods, delayMinutes: 3 }).at(-1);
    // Minute 12 is in the period 10–14; seen from minute 15 (12 + 3) when periods may be partial, from 17 (14 + 3) when not.
    expect([at(14, 'partial'), at(15, 'partial'), at(16, 'complete'), at(17, 'complete')]).toEqual([undefined, 1, undefined, 1]);
  });

  it('reads periods that end at the minute evaluated, as the sliding window does, the newest only partly arrived', () => {
    const store = new MetricStore();
    for (let minute = 10; minute < 20; minute++) store.add(minute, { ...metric, value: 1 });
    const clock = { reading: 'missing-is-zero', periods: 'clock', delayMinutes: 3 } as const;
    // At minute 18 the periods are 9–13 and 14–18; minutes 16–18 have not arrived: 4 and 2.
    expect(seriesAt(alarm({ EvaluationPeriods: 2 }), store, 18, clock).slice(-2)).toEqual([4, 2]);
    // A minute later both move on by one: 10–14 whole, 15–19 with 15 and 16.
    expect(seriesAt(alarm({ EvaluationPeriods: 2 }), store, 19, clock).slice(-2)).toEqual([5, 2]);
  });

  it('keeps a single-period FILL alarm over 5-minute sums OK with late data, where two periods, one enough, go off (the FILL entry)', () => {
    const template = (evaluationPeriods: number, datapointsToAlarm: number) => ({
      Resources: {
        A: {
          Type: 'AWS::CloudWatch::Alarm',
          Properties: {
            AlarmName: 'a',
            Metrics: [
              { Id: 'e', Expression: 'FILL(m, 0)', ReturnData: true },
              {
                Id: 'm',
                ReturnData: false,
                MetricStat: {
                  Metric: { Namespace: 'Test', MetricName: 'Errors', Dimensions: [{ Name: 'service', Value: 's' }] },
                  Period: 300,
                  Stat: 'Sum',
                },
              },
            ],
            EvaluationPeriods: evaluationPeriods,
            DatapointsToAlarm: datapointsToAlarm,
            Threshold: 5,
            ComparisonOperator: 'GreaterThanOrEqualToThreshold',
            TreatMissingData: 'notBreaching',
          },
        },
      },
    });
    // One failure a minute from minute 0 on: 5 in any whole 5-minute period, at most 2 arrived of the newest.
    const store = new MetricStore();
    for (let minute = 0; minute < 30; minute++) store.add(minute, { ...metric, value: 1 });
    const clock = { reading: 'missing-is-zero', periods: 'clock', delayMinutes: 3 } as const;
    const states = (n: number, m: number) => timeline(template(n, m), store, { from: 0, to: 30 }, clock).get('a')!;
    expect(states(1, 1)).not.toContain('ALARM');
    expect(states(2, 1).indexOf('ALARM')).toBe(9);
  });

  it('refuses a setting it does not read, so none is ignored unnoticed', () => {
    expect(() => alarm({ ThresholdMetricId: 'x' })).toThrow(/ThresholdMetricId not modelled/);
  });

  it('holds a composite rule of its children, as ALARM(…) AND / OR / NOT', () => {
    const states: Record<string, AlarmState> = { L: 'ALARM', S: 'OK' };
    const holds = (rule: string) => ruleHolds(rule, (id) => states[id]!);
    expect(holds('(ALARM("${L.Arn}") AND ALARM("${S.Arn}"))')).toBe(false);
    expect(holds('(ALARM("${L.Arn}") OR ALARM("${S.Arn}"))')).toBe(true);
    expect(holds('ALARM("${L.Arn}") AND NOT ALARM("${S.Arn}")')).toBe(true);
    expect(holds('OK("${S.Arn}")')).toBe(true);
  });

  it('keeps an AWS/DynamoDB alarm as it was while its metric has no data, whatever it says of missing data', () => {
    const template = {
      Resources: {
        T: {
          Type: 'AWS::CloudWatch::Alarm',
          Properties: {
            AlarmName: 't',
            Namespace: 'AWS/DynamoDB',
            MetricName: 'ThrottledRequests',
            Dimensions: [{ Name: 'TableName', Value: 'x' }],
            Statistic: 'Sum',
            Period: 60,
            EvaluationPeriods: 1,
            Threshold: 1,
            ComparisonOperator: 'GreaterThanOrEqualToThreshold',
            TreatMissingData: 'notBreaching',
          },
        },
      },
    };
    const store = new MetricStore();
    store.add(0, { namespace: 'AWS/DynamoDB', name: 'ThrottledRequests', dimensions: { TableName: 'x' }, value: 2 });
    const states = timeline(template, store, { from: 0, to: 10 }, { reading: 'missing-is-zero', periods: 'complete', delayMinutes: 3 });
    // ALARM once minute 0 is seen (minute 3), and kept while nothing more comes, as `ignore` keeps a state.
    expect(states.get('t')).toEqual([
      'INSUFFICIENT_DATA',
      'INSUFFICIENT_DATA',
      'INSUFFICIENT_DATA',
      'ALARM',
      'ALARM',
      'ALARM',
      'ALARM',
      'ALARM',
      'ALARM',
      'ALARM',
      'ALARM',
    ]);
  });
});
