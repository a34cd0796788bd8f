/**
 * What a refused key costs in logs (docs/decisions/0931-a-web-acl-in-front-of-each-stage.md):
 * a made-up key must not cost a line of its own. Each refusal prints one EMF line (its two counts,
 * which the guard and the AuthFailures ticket need per invocation, dated as Lambda dates its Errors);
 * the refusal's log line and its DynamoDB lookup's metrics are summed: one line per cause and
 * operation a minute at most, with the count since that cause's previous line.
 */
import type { DynamoDbCall } from '../../shared/dynamo-calls.ts';
import { publishDynamoDbMetrics } from '../../shared/dynamo-calls.ts';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { functionVersion, logger, metricNames, metricsNamespace } from '../../shared/observability.ts';

/** Why a key is refused: no bearer token, a token no key of this stage can be, or no active key with that hash. */
export type RefusalReason = 'malformed_header' | 'not_a_key_of_this_stage' | 'unknown_or_revoked_key';

/** A cause's refusals are logged at most once in this long, each line counting those since the previous one. */
export const refusalLineEveryMs = 60_000;
/** The refused lookups' DynamoDB metrics are published once this many have gathered (an EMF value array holds 100). */
const callsPerPublish = 100;

type Cause = { readonly reason: RefusalReason; readonly operation: string; count: number; since: number; lastLineAt?: number };
const causes = new Map<string, Cause>();
let calls: DynamoDbCall[] = [];
/** When the first of the gathered calls was made. */
let callsSince = 0;

/** Powertools' Metrics, to serialize a refusal's counts as Powertools would and to ask whether metrics are off. */
class RefusalMetrics extends Metrics {
  off = () => this.isDisabled();
}
/** AuthFailures: the stage's count of refused keys (dimension service), which the AuthFailures ticket reads. */
const stageCount = new RefusalMetrics({ namespace: metricsNamespace });
/** Refusals: this version's answers (as recordAnswer publishes them), which its guards read. */
const versionCount = new RefusalMetrics({ namespace: metricsNamespace, defaultDimensions: { function: 'authorizer' } });

/**
 * Both counts of one refusal, dated `at`, in one EMF line: Powertools writes a line per set of
 * dimensions, two lines where one will do (CloudWatch reads several directives from one line).
 */
const refusalMetricsLine = (at: number): string => {
  stageCount.setTimestamp(at).addMetric(metricNames.authFailures, 'Count', 1);
  versionCount.setTimestamp(at).addDimensions({}).addDimensions({ version: functionVersion() });
  versionCount.addMetric(metricNames.refusals, 'Count', 1);
  const [stage, version] = [stageCount.serializeMetrics(), versionCount.serializeMetrics()];
  stageCount.clearMetrics();
  versionCount.clearMetrics();
  versionCount.clearDimensions();
  return JSON.stringify({
    ...stage,
    ...version,
    _aws: { Timestamp: at, CloudWatchMetrics: [...stage._aws.CloudWatchMetrics, ...version._aws.CloudWatchMetrics] },
  });
};

const logCause = (cause: Cause, now: number) => {
  logger.info('authorization refused', {
    reason: cause.reason,
    operation: cause.operation,
    refusals: cause.count,
    since: new Date(cause.since).toISOString(),
  });
  cause.count = 0;
  cause.lastLineAt = now;
};

/**
 * One refusal, its invocation begun at `invokedAt`: its metrics at once, its log line when its cause
 * has had none for a minute (the first one at once), its DynamoDB calls with the next hundred.
 */
export const recordRefusal = (
  refusal: { reason: RefusalReason; operation: string; calls: readonly DynamoDbCall[] },
  invokedAt: number,
  now: number = Date.now(),
) => {
  if (!stageCount.off()) process.stdout.write(`${refusalMetricsLine(invokedAt)}\n`);
  const id = `${refusal.reason} ${refusal.operation}`;
  let cause = causes.get(id);
  if (cause === undefined) causes.set(id, (cause = { reason: refusal.reason, operation: refusal.operation, count: 0, since: now }));
  if (cause.count === 0) cause.since = now;
  cause.count += 1;
  if (cause.lastLineAt === undefined || now - cause.lastLineAt >= refusalLineEveryMs) logCause(cause, now);
  if (calls.length === 0) callsSince = now;
  calls.push(...refusal.calls);
  if (calls.length >= callsPerPublish) publishCalls();
};

const publishCalls = () => {
  if (calls.length === 0) return;
  publishDynamoDbMetrics(calls);
  calls = [];
};

/**
 * Called as each invocation starts: the lines and lookup metrics whose minute has passed. What an
 * execution environment still holds when Lambda ends it is lost: the counts of a summary line and
 * a minute of lookup times, never a metric a guard or an alarm reads.
 */
export const flushDueRefusals = (now: number = Date.now()) => {
  const due = (since: number | undefined) => since === undefined || now - since >= refusalLineEveryMs;
  for (const cause of causes.values()) if (cause.count > 0 && due(cause.lastLineAt)) logCause(cause, now);
  if (due(callsSince)) publishCalls();
};
