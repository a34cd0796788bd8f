import type { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { metricNames } from '../../../shared/observability.ts';
import { type AlarmTarget, alarm } from './stage-alarm.ts';
import { aliasMetric, apiMetric, period, reservingFunctions, serviceMetric, twoPeriodsOfThree } from './metrics.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';

type Props = StoreOrdersMonitoringProps;

/**
 * The API's failed answers over `window`: API Gateway's 5xx less the documented refusals, which a
 * client is told to retry later and which say nothing of the service's health: a list or page
 * refused because its function runs all it reserves (a Lambda throttle, which API Gateway answers
 * with a 5xx: docs/api.md), and a filtered page refused while the status index is not ACTIVE
 * (`StatusIndexNotReady`, 503 with Retry-After). Never below 0. Those are judged against capacity
 * apart (./capacity.ts: `<Name>ShedShare` pages when most of a route's requests are shed). Used by
 * Api5xxRate and the availability SLO (./slo.ts).
 */
export function serverFailures(props: Props, window: Duration) {
  // Of the live alias only: the pre-traffic hook's own invocations of a new version, throttled at
  // the reserved concurrency, answer no client, and must hide none of the stage's 5xx.
  const shed = reservingFunctions(props).map(({ name, fn }, i) => ({
    id: `shed${i}`,
    metric: aliasMetric(fn, 'Throttles', 'Sum', window).with({ label: `${name} throttles (live alias)` }),
  }));
  const refusals = [...shed.map(({ id }) => `FILL(${id}, 0)`), 'FILL(notReady, 0)'].join(' - ');
  const failed = `(FILL(errors, 0) - ${refusals})`;
  return {
    expression: `IF(${failed} > 0, ${failed}, 0)`,
    usingMetrics: {
      errors: apiMetric(props, '5XXError', 'Sum').with({ period: window }),
      ...Object.fromEntries(shed.map(({ id, metric }) => [id, metric])),
      notReady: serviceMetric(props, metricNames.statusIndexNotReady, 'Sum').with({ period: window }),
    },
  };
}

/** Api5xxRate's expression around `failed`: its share of 5 minutes with at least `minRequests` requests, else 0. */
export const serverErrorRateExpression = (minRequests: number, failed: string) =>
  `IF(requests >= ${minRequests}, 100 * ${failed} / requests, 0)`;

/**
 * Api5xxRate (a page): the share of the API's answers that failed, over all routes and versions.
 * Not a guard: a stage-wide share judges both versions at once (a deploy's guards judge the new one).
 */
export function addServerErrorAlarm(target: AlarmTarget, props: Props) {
  const { config } = props;
  const failures = serverFailures(props, period);
  alarm(
    target,
    'Api5xxRate',
    `${config.alarms.serverErrorRatePercent}% or more of the requests failed with a 5xx, documented refusals (lists or pages shed at their concurrency, the status index not ready) left out, in two of the last three 5-minute periods with ${config.alarms.serverErrorMinRequests}+ requests.`,
    {
      // Judged only with a minimum of requests: a handful (the synthetic client's alone) makes one transient 5xx a large share.
      metric: new cloudwatch.MathExpression({
        label: 'failed answers (%)',
        expression: serverErrorRateExpression(config.alarms.serverErrorMinRequests, `(${failures.expression})`),
        usingMetrics: { ...failures.usingMetrics, requests: apiMetric(props, 'Count', 'Sum') },
        period,
      }),
      threshold: config.alarms.serverErrorRatePercent,
      ...twoPeriodsOfThree,
    },
  );
}
