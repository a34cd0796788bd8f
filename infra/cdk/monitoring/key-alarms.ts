import * as logs from 'aws-cdk-lib/aws-logs';
import { metricNames, metricsNamespace } from '../../../shared/observability.ts';
import { type AlarmTarget, alarm } from './stage-alarm.ts';
import { failingMinutes, failingMinutesRule, minute, newestNotAlone, serviceMetric } from './metrics.ts';
import type { StoreOrdersMonitoringProps } from './props.ts';

/**
 * Keys and the authorizer, stage-wide, whatever version answers:
 *
 * - AuthorizerFailures (a page): what API Gateway reports as AUTHORIZER_FAILURE or
 *   AUTHORIZER_CONFIGURATION_ERROR (a crash, a timeout, DynamoDB down, or a gateway that cannot
 *   invoke the authorizer at all, which no Lambda metric sees), counted from the access log, in 2 of
 *   the last 10 minutes: one DynamoDB deadline missed once pages nobody. A refused key is no
 *   failure: the authorizer refuses by throwing "Unauthorized", which Lambda counts in Errors (the
 *   authorizer's guard subtracts them, ./guards.ts).
 * - AuthFailures (a ticket): many refused keys, counted by the authorizer. A leaked or revoked key
 *   in use, or a client misconfigured: its owner is told the next working day. Requests refused
 *   before the authorizer ran (no or a malformed header) never count, and nothing here pages.
 */
export function addKeyAlarms(target: AlarmTarget, props: StoreOrdersMonitoringProps) {
  const { config, accessLogs } = props;
  new logs.MetricFilter(target.scope, 'AuthorizerFailuresFilter', {
    logGroup: accessLogs,
    filterPattern: logs.FilterPattern.any(
      logs.FilterPattern.stringValue('$.errorResponseType', '=', 'AUTHORIZER_FAILURE'),
      logs.FilterPattern.stringValue('$.errorResponseType', '=', 'AUTHORIZER_CONFIGURATION_ERROR'),
    ),
    metricNamespace: metricsNamespace,
    metricName: metricNames.authorizerFailures,
    metricValue: '1',
    dimensions: { service: '$.service' },
  });
  const { failing, of } = failingMinutesRule;
  alarm(target, 'AuthorizerFailures', `The authorizer failed (refused keys not counted) in ${failing} of the last ${of} minutes.`, {
    metric: serviceMetric(props, metricNames.authorizerFailures, 'Sum').with({ period: minute }),
    ...failingMinutes,
  });
  alarm(
    target,
    'AuthFailures',
    `${config.alarms.authFailures}+ requests with an unknown or revoked key in one of the last two 5-minute periods.`,
    { metric: serviceMetric(props, metricNames.authFailures, 'Sum'), threshold: config.alarms.authFailures, ...newestNotAlone },
    { kind: 'ticket' },
  );
}
