/**
 * CodeDeploy's `BeforeAllowTraffic` hook of every function of a stage (infra/cdk/release-checks.ts).
 * Before an alias moves, it invokes the new version of each function directly, with the events
 * API Gateway would send, and reports `Failed` to CodeDeploy unless each answers as the API
 * promises; a failed hook stops the deployment before any client reaches the new version.
 *
 * What it checks (functions/pre-traffic-hook/checks.ts): the authorizer allows the stage's canary key (kept in
 * Secrets Manager by `npm run keys -- canary`) with the key's usage identifier, and refuses a wrong
 * key with exactly `Unauthorized`; the list answers 200 with a JSON array of valid Orders, bounded
 * as a probe's list is, not empty while the table's item count says it holds orders; the v2 list's
 * first page of one order and the next through its cursor, and a page of pending orders; a cancel of
 * int64's minimum (never an order) answers 404 order_not_found, of a malformed id 400
 * invalid_order_id; and a pending order of the hook's own (shared/probe-writes.ts, an id the store's
 * other systems never use) is cancelled: 204, stored cancelled, 204 again. That order is the only
 * thing it writes, and it deletes it.
 *
 * It never fails a good release for being busy, and always answers: three deployments of one
 * release run it at once beside the synthetic client, so its requests carry an identity of their
 * own per deployment (no list lease shared with them), a throttle or a documented 429/503 is waited
 * out until its deadline (the function's timeout less reportMarginMs) and is then BUSY (counted in
 * ProbeBusy, never a failure), unless the version the function's `live` alias points at, asked the
 * same beside it, answered (./invocations.ts: then the new version alone refuses, and fails). Every
 * check stops at that deadline, and whatever fails (its environment included) is reported as
 * Failed with the reason.
 *
 * It ships as a bundle of its own, not as one of the service's functions: nothing of it is on a
 * client's path.
 */
import { CodeDeployClient, PutLifecycleEventHookExecutionStatusCommand } from '@aws-sdk/client-codedeploy';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Context } from 'aws-lambda';
import { z } from 'zod';
import { ServiceBusy } from '../../shared/answers.ts';
import { type CanaryKey, readCanaryKey } from '../../shared/canary-key.ts';
import { type HookRun, hookChecks } from './checks.ts';
import { liveVersionBeside, untilDeadline } from './invocations.ts';
import { createProbeOrder, deleteProbeOrder, type ProbeOrders, publishProbeBusy } from '../../shared/probe-writes.ts';
import { probeSlots } from '../../shared/probes.ts';

/** What CodeDeploy sends a lifecycle hook. */
export type HookEvent = { readonly DeploymentId: string; readonly LifecycleEventHookExecutionId: string };

const settingsSchema = z.object({
  AUTHORIZER_VERSION_ARN: z.string().min(1),
  LIST_ORDERS_VERSION_ARN: z.string().min(1),
  CANCEL_ORDER_VERSION_ARN: z.string().min(1),
  LIST_ORDERS_PAGED_VERSION_ARN: z.string().min(1),
  ORDERS_TABLE: z.string().min(1),
  CANARY_KEY_SECRET: z.string().min(1),
  /** The stage's service name (`store-orders-<stage>`): ProbeBusy's `service` dimension. */
  SERVICE_NAME: z.string().min(1),
  /** `arn:<partition>:execute-api:<region>:<account>:<api id>/<stage>`: what the authorizer's methodArn starts with. */
  METHOD_ARN_PREFIX: z.string().regex(/^arn:[\w-]+:execute-api:[\w-]+:\d{12}:\w+\/[\w-]+$/),
  /** The canary tier's list slots per key: the list check lists once more than this, under one identity. */
  CANARY_CONCURRENT_LISTS: z.coerce.number().int().min(1),
});
type Settings = z.infer<typeof settingsSchema>;

/**
 * Time kept back from the function's own timeout: the checks stop this long before it, so that
 * the report to CodeDeploy (retried by the SDK) is always sent, whatever the checks were doing.
 */
export const reportMarginMs = 30_000;

const dynamodb = new DynamoDBClient({});
// The one call that must get through: more attempts than the SDK's default three.
const codedeploy = new CodeDeployClient({ maxAttempts: 6 });
const secrets = new SecretsManagerClient({});

type Outcome = { lines: string[]; failed: string[]; busy: string[] };

const failure = (name: string, reason: string): Outcome => ({ lines: [`FAIL  ${name}: ${reason}`], failed: [name], busy: [] });
const reasonOf = (error: unknown) =>
  error instanceof Error
    ? error.name === 'TimeoutError' || error.name === 'AbortError'
      ? 'no answer before the deadline'
      : error.message
    : String(error);

/**
 * `work`, or a TimeoutError shortly after the deadline: a call without an abort signal of its own
 * cannot outlast it either (calls with one stop at the deadline itself and say why).
 */
const withinDeadline = <T>(deadline: number, work: Promise<T>): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    const error = Object.assign(new Error('the deadline passed'), { name: 'TimeoutError' });
    timer = setTimeout(() => reject(error), Math.max(1, deadline + 2_000 - Date.now()));
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
};

/** The hook's own orders for this deployment: a slot of the hooks' range, free again after the hook's own timeout. */
const probeOrdersOf = (settings: Settings, event: HookEvent, deadline: number): ProbeOrders => ({
  client: dynamodb,
  tableName: settings.ORDERS_TABLE,
  by: `pre-traffic hook ${event.DeploymentId}`,
  slots: probeSlots.preTrafficHook,
  lifetimeSeconds: Math.ceil((deadline + reportMarginMs - Date.now()) / 1000),
  signal: () => untilDeadline({ deadline }),
});

/**
 * Which version each function's `live` alias points at, read once per function when a check first
 * needs it; a failure to read it leaves nothing to compare with (logged), as on a first deploy.
 */
const liveVersions = (deadline: number) => {
  const known = new Map<string, Promise<string | undefined>>();
  return (newVersionArn: string) => {
    const live =
      known.get(newVersionArn) ??
      liveVersionBeside({ deadline }, newVersionArn).catch((error: unknown) => {
        console.log(JSON.stringify({ level: 'WARN', message: `the live version of ${newVersionArn} is unknown: ${reasonOf(error)}` }));
        return undefined;
      });
    known.set(newVersionArn, live);
    return live;
  };
};

/** Whether `error` is the deadline's: a call aborted at it, or a check not started by it. */
const isDeadline = (error: unknown) => error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');

/**
 * A check's verdict and reason. A check the deadline leaves unstarted, or stops, is busy when a busy
 * check before it took the time; otherwise it failed (the service was slow, not busy).
 */
const verdictOf = (error: unknown, busyBefore: boolean, started: boolean): { busy: boolean; reason: string } => {
  if (error instanceof ServiceBusy) return { busy: true, reason: error.message };
  if (!isDeadline(error)) return { busy: false, reason: reasonOf(error) };
  if (busyBefore)
    return { busy: true, reason: `${started ? 'stopped at' : 'not started by'} the deadline: the checks' time went to a busy service` };
  return { busy: false, reason: started ? reasonOf(error) : 'not started: the checks reached their deadline' };
};

/** Each check in turn, one line each (PASS, FAIL or BUSY); none starts or runs past the deadline. */
const runEach = async (run: HookRun): Promise<Outcome> => {
  const outcome: Outcome = { lines: [], failed: [], busy: [] };
  for (const { name, run: check } of hookChecks(run)) {
    const started = Date.now() < run.deadline;
    try {
      if (!started) throw Object.assign(new Error('not started'), { name: 'TimeoutError' });
      outcome.lines.push(`PASS  ${name}: ${await withinDeadline(run.deadline, check())}`);
    } catch (error) {
      const { busy, reason } = verdictOf(error, outcome.busy.length > 0, started);
      (busy ? outcome.busy : outcome.failed).push(name);
      outcome.lines.push(`${busy ? 'BUSY' : 'FAIL'}  ${name}: ${reason}`);
    }
  }
  return outcome;
};

/** Every check's outcome, one line each, and the names of those that failed or were busy. */
export const runChecks = async (event: HookEvent, deadline: number): Promise<Outcome> => {
  const parsed = settingsSchema.safeParse(process.env);
  if (!parsed.success) return failure('settings', `the hook's environment is invalid: ${parsed.error.message.replaceAll('\n', ' ')}`);
  const settings = parsed.data;
  let canary: CanaryKey;
  try {
    canary = await withinDeadline(deadline, readCanaryKey(secrets, settings.CANARY_KEY_SECRET));
  } catch (error) {
    const fix = 'create it with `npm run keys -- canary --stage <stage>`';
    return failure('canary key', `secret ${settings.CANARY_KEY_SECRET} unreadable (${reasonOf(error)}); ${fix}`);
  }
  const probeOrders = probeOrdersOf(settings, event, deadline);
  // Made first: while it exists the store holds at least one item, so a v2 page of one has a next page.
  const probeOrder = await withinDeadline(deadline, createProbeOrder(probeOrders)).catch((error: unknown) => error as Error);
  const run: HookRun = {
    targets: settings,
    canary,
    dynamodb,
    identity: `pre-traffic-${event.DeploymentId}`,
    baselineIdentity: `pre-traffic-${event.DeploymentId}-live`,
    liveVersionOf: liveVersions(deadline),
    canaryConcurrentLists: settings.CANARY_CONCURRENT_LISTS,
    deadline,
    probeOrders,
    probeOrder,
  };
  const outcome = await runEach(run);
  if (typeof probeOrder === 'string')
    // Within the report's margin: the checks' deadline may have passed already.
    await deleteProbeOrder(probeOrders, probeOrder, AbortSignal.timeout(5_000)).catch((error: unknown) =>
      outcome.lines.push(`probe order ${probeOrder} not deleted (its slot is free again once it expires): ${reasonOf(error)}`),
    );
  // The key never reaches a log line, whatever a function echoed.
  return { ...outcome, lines: outcome.lines.map((line) => line.replaceAll(canary.key, '<canary key>')) };
};

/**
 * Sends the outcome to CodeDeploy, before the function's own timeout (its attempts bounded by the
 * time left less a second); a report that cannot be sent is thrown (the invocation fails, and the
 * log says why).
 */
const report = async (event: HookEvent, status: 'Succeeded' | 'Failed', remainingMs: number) =>
  codedeploy.send(
    new PutLifecycleEventHookExecutionStatusCommand({
      deploymentId: event.DeploymentId,
      lifecycleEventHookExecutionId: event.LifecycleEventHookExecutionId,
      status,
    }),
    { abortSignal: AbortSignal.timeout(Math.max(1, remainingMs - 1_000)) },
  );

/** The run's ProbeBusy, within the report's margin; a failure to publish is logged and nothing more. */
const publishBusy = async (busy: number) => {
  const service = process.env.SERVICE_NAME;
  if (service === undefined || service === '') return;
  await publishProbeBusy(service, busy, AbortSignal.timeout(5_000)).catch((error: unknown) =>
    console.log(JSON.stringify({ level: 'WARN', message: `ProbeBusy not published: ${reasonOf(error)}` })),
  );
};

const summaryOf = ({ lines, failed, busy }: Outcome) =>
  failed.length > 0
    ? `failed: ${failed.join(', ')}${busy.length > 0 ? `; busy: ${busy.join(', ')}` : ''}`
    : busy.length > 0
      ? `${lines.length - busy.length} of ${lines.length} checks passed; busy until the deadline: ${busy.join(', ')}`
      : `all ${lines.length} checks passed`;

export const handler = async (event: HookEvent, context: Pick<Context, 'getRemainingTimeInMillis'>) => {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - reportMarginMs;
  const outcome = await runChecks(event, deadline).catch((error: unknown) => failure('hook', reasonOf(error)));
  const { lines, failed, busy } = outcome;
  // A busy check is reported apart: only a wrong answer or an undocumented error fails the release.
  const status = failed.length === 0 ? 'Succeeded' : 'Failed';
  for (const line of lines)
    console.log(JSON.stringify({ level: line.startsWith('FAIL') ? 'ERROR' : line.startsWith('BUSY') ? 'WARN' : 'INFO', message: line }));
  await publishBusy(busy.length);
  const summary = summaryOf(outcome);
  try {
    await report(event, status, context.getRemainingTimeInMillis());
  } catch (error) {
    console.log(JSON.stringify({ level: 'ERROR', message: `could not report ${status} to CodeDeploy (${summary}): ${reasonOf(error)}` }));
    throw error;
  }
  console.log(JSON.stringify({ level: failed.length === 0 ? 'INFO' : 'ERROR', message: `reported ${status} to CodeDeploy: ${summary}` }));
  return { status, failed, busy, lines };
};
