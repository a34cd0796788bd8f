/**
 * CodeDeploy's `BeforeAllowTraffic` hook of every function of a stage (infra/cdk/release-checks.ts).
 * Before an alias moves, it runs the known-answer suite of every function (each function's
 * `known-answers.ts`, collected by the registry into this bundle: `hookHandler(suites)` is what the
 * bundle's entry exports) against the new versions, invoked directly with the events API Gateway
 * would send (./prober.ts), and reports `Failed` to CodeDeploy unless each answers as the API
 * promises; a failed hook stops the deployment before any client reaches the new version. Its
 * settings name no function: `VERSION_ARNS` maps each function of the registry to its new version.
 *
 * It writes only orders of its own in the probes' reserved ids (shared/probe-writes.ts), and deletes
 * them. It never fails a good release for being busy, and always answers: a throttle or a documented
 * 429/503 is waited out until its deadline (the function's timeout less reportMarginMs) and is then
 * BUSY (counted in ProbeBusy), unless the version the function's `live` alias points at, sent a
 * request that changes nothing beside it, answered (then the new version alone refuses, and fails).
 * A check it could not set up (the canary key, its probe order) fails it: a gate does not let an
 * unchecked release through. Invoked with `{"onDemand": true}` (`npm run probes`), it runs the same
 * suite against the versions its settings name and returns the outcome, reporting to no one.
 */
import { randomBytes } from 'node:crypto';
import { CodeDeployClient, PutLifecycleEventHookExecutionStatusCommand } from '@aws-sdk/client-codedeploy';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Context } from 'aws-lambda';
import { z } from 'zod';
import { type CanaryKey, readCanaryKey } from '../../shared/canary-key.ts';
import { runSuites, summaryOf, type RunOutcome, type Suite, withinDeadline } from '../../shared/known-answers.ts';
import { type ProbeOrders, publishProbeRun } from '../../shared/probe-writes.ts';
import { probeSlots } from '../../shared/probes.ts';
import { liveVersionBeside, untilDeadline } from './invocations.ts';
import { type HookRun, hookProber } from './prober.ts';

/** What CodeDeploy sends a lifecycle hook; or, from `npm run probes`, a run on demand. */
export type HookEvent = { readonly DeploymentId: string; readonly LifecycleEventHookExecutionId: string } | { readonly onDemand: true };

const versionArn = z.string().regex(/^arn:[\w-]+:lambda:[\w-]+:\d{12}:function:[\w-]+:\d+$/, 'a function version ARN');

const settingsSchema = z.object({
  /** Each function of the registry → the version its deployment publishes (infra/cdk/release-checks.ts). */
  VERSION_ARNS: z
    .string()
    .transform((text, context) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        context.addIssue({ code: 'custom', message: 'not JSON' });
        return z.NEVER;
      }
    })
    .pipe(z.record(z.string(), versionArn)),
  ORDERS_TABLE: z.string().min(1),
  CANARY_KEY_SECRET: z.string().min(1),
  /** The stage's service name (`store-orders-<stage>`): ProbeBusy's `service` dimension. */
  SERVICE_NAME: z.string().min(1),
  /** `arn:<partition>:execute-api:<region>:<account>:<api id>/<stage>`: what the authorizer's methodArn starts with. */
  METHOD_ARN_PREFIX: z.string().regex(/^arn:[\w-]+:execute-api:[\w-]+:\d{12}:\w+\/[\w-]+$/),
  /** The canary tier's list slots per key: the list is read once more than this, under one identity. */
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

const failure = (name: string, reason: string): HookOutcome => ({
  lines: [`FAIL  ${name}: ${reason}`],
  failed: [name],
  busy: [],
  skipped: [],
  setup: [],
  notes: [],
});
const reasonOf = (error: unknown) =>
  error instanceof Error
    ? error.name === 'TimeoutError' || error.name === 'AbortError'
      ? 'no answer before the deadline'
      : error.message
    : String(error);

/** The run's name: the deployment's, or one of its own on demand (its leases and probe orders are its own). */
const runNameOf = (event: HookEvent) => ('onDemand' in event ? `on-demand-${randomBytes(6).toString('hex')}` : event.DeploymentId);

/** The hook's own orders for this run: a slot of the hooks' range, free again after the hook's own timeout. */
const probeOrdersOf = (settings: Settings, runName: string, deadline: number): ProbeOrders => ({
  client: dynamodb,
  tableName: settings.ORDERS_TABLE,
  by: `pre-traffic hook ${runName}`,
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

/** The functions the suites check that the settings name no new version of. */
const missingVersions = (suites: readonly Suite[], settings: Settings) =>
  suites.map((suite) => suite.route?.operation ?? 'authorizer').filter((name) => settings.VERSION_ARNS[name] === undefined);

type HookOutcome = RunOutcome & { readonly notes: readonly string[] };

/** Every check's outcome, one line each, and what else the run noted (a probe order left behind). */
export const runChecks = async (suites: readonly Suite[], event: HookEvent, deadline: number): Promise<HookOutcome> => {
  const parsed = settingsSchema.safeParse(process.env);
  if (!parsed.success) return failure('settings', `the hook's environment is invalid: ${parsed.error.message.replaceAll('\n', ' ')}`);
  const settings = parsed.data;
  const missing = missingVersions(suites, settings);
  if (missing.length > 0) return failure('settings', `VERSION_ARNS names no new version of ${missing.join(', ')}`);
  let canary: CanaryKey;
  try {
    canary = await withinDeadline(deadline, readCanaryKey(secrets, settings.CANARY_KEY_SECRET));
  } catch (error) {
    const fix = 'create it with `npm run keys -- canary --stage <stage>`';
    return failure('canary key', `secret ${settings.CANARY_KEY_SECRET} unreadable (${reasonOf(error)}); ${fix}`);
  }
  const runName = runNameOf(event);
  const notes: string[] = [];
  const run: HookRun = {
    versionArns: settings.VERSION_ARNS,
    ordersTable: settings.ORDERS_TABLE,
    methodArnPrefix: settings.METHOD_ARN_PREFIX,
    canary,
    dynamodb,
    identity: `pre-traffic-${runName}`,
    baselineIdentity: `pre-traffic-${runName}-live`,
    liveVersionOf: liveVersions(deadline),
    canaryConcurrentLists: settings.CANARY_CONCURRENT_LISTS,
    deadline,
    probeOrders: probeOrdersOf(settings, runName, deadline),
    note: (line) => notes.push(line),
  };
  const outcome = await runSuites(suites, hookProber(run, suites), { deadline });
  // The key never reaches a log line, whatever a function echoed.
  const hidden = (lines: readonly string[]) => lines.map((line) => line.replaceAll(canary.key, '<canary key>'));
  return { ...outcome, lines: hidden(outcome.lines), notes: hidden(notes) };
};

/**
 * Sends the outcome to CodeDeploy, before the function's own timeout (its attempts bounded by the
 * time left less a second); a report that cannot be sent is thrown (the invocation fails, and the
 * log says why).
 */
const report = async (event: Extract<HookEvent, { DeploymentId: string }>, status: 'Succeeded' | 'Failed', remainingMs: number) =>
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
  await publishProbeRun(service, { busy }, AbortSignal.timeout(5_000)).catch((error: unknown) =>
    console.log(JSON.stringify({ level: 'WARN', message: `ProbeBusy not published: ${reasonOf(error)}` })),
  );
};

const levelOf = (line: string) => (/^(FAIL|SETUP)/.test(line) ? 'ERROR' : /^(BUSY|SKIP)/.test(line) ? 'WARN' : 'INFO');

/** The hook's handler over `suites`: the bundle's entry (infra/cdk/release-checks.ts) exports `hookHandler(<every function's suite>)`. */
export const hookHandler = (suites: readonly Suite[]) => async (event: HookEvent, context: Pick<Context, 'getRemainingTimeInMillis'>) => {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - reportMarginMs;
  const outcome = await runChecks(suites, event, deadline).catch((error: unknown) => failure('hook', reasonOf(error)));
  const { lines, busy, skipped, notes } = outcome;
  // A gate lets no release through unchecked: a check it could not set up fails it; a busy or skipped one does not.
  const failed = [...outcome.failed, ...outcome.setup];
  const status = failed.length === 0 ? 'Succeeded' : 'Failed';
  for (const line of [...lines, ...notes]) console.log(JSON.stringify({ level: levelOf(line), message: line }));
  await publishBusy(busy.length);
  const summary = summaryOf(outcome);
  const value = { status, failed, busy, skipped, lines, summary };
  if ('onDemand' in event) {
    console.log(JSON.stringify({ level: failed.length === 0 ? 'INFO' : 'ERROR', message: `on demand, ${status}: ${summary}` }));
    return value;
  }
  try {
    await report(event, status, context.getRemainingTimeInMillis());
  } catch (error) {
    console.log(JSON.stringify({ level: 'ERROR', message: `could not report ${status} to CodeDeploy (${summary}): ${reasonOf(error)}` }));
    throw error;
  }
  console.log(JSON.stringify({ level: failed.length === 0 ? 'INFO' : 'ERROR', message: `reported ${status} to CodeDeploy: ${summary}` }));
  return value;
};
