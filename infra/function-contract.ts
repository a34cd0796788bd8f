/**
 * What a function's contract module (`functions/<function>/contract.ts`) states: everything the
 * rest of the house needs to know about that function and no more. The registry
 * (infra/registry.ts) collects the contracts; the CDK stack, the pre-traffic hook's targets, the
 * local service, the per-key limits, the monitoring, the OpenAPI document and the probes' known-answer
 * suite are built from it.
 * A handler never imports its contract (eslint.config.js), so what ships stays small: the facts a
 * handler needs at run time (its route) live in a module of its own that the contract reads.
 * No aws-cdk-lib here: the local run imports this module.
 */
import type { PublishedOperation } from './wire-forms.ts';
import type { FunctionStage, StageName } from './stage-config.ts';
import type { MethodLimitClass } from './tiers.ts';
import type { Route } from '../shared/routes.ts';

/** The deployed (or local) names of the stage's tables. */
export type TableNames = { readonly orders: string; readonly apiKeys: string; readonly listLeases: string };

/** One value per deployed stage: a threshold, an objective. */
export type PerStage<Value> = Readonly<Record<StageName, Value>>;

/** What one Lambda function is: the stack deploys exactly this, and the local run runs the same handler with it. */
export type FunctionSettings = {
  /** The handler module, relative to the repository root; it exports `handler`. */
  readonly handlerFile: string;
  readonly description: string;
  readonly memorySize: number;
  readonly timeoutSeconds: number;
  /** Only what this function reads (shared/config.ts); infra/function-settings.ts adds the stage's Powertools settings. */
  readonly environment: (stage: FunctionStage, tables: TableNames) => Record<string, string>;
  /** At most this many invocations at once (Lambda reserved concurrency; the local gateway's limit); unset: no cap. */
  readonly reservedConcurrency?: (stage: FunctionStage) => number;
  /**
   * Lambda's own log lines of each invocation (its system logs): `all` (START, END, REPORT), or
   * `warnings` only, in Lambda's JSON log format, for a function every made-up key reaches
   * (docs/decisions/0931-a-web-acl-in-front-of-each-stage.md). Default `all`.
   */
  readonly platformLogs?: 'all' | 'warnings';
};

/**
 * The DynamoDB actions a function's role allows on each table of its stage, and no more; a table
 * not named: no access (test/infra/iam.test.ts evaluates the synthesized roles against it).
 */
export type TableAccess = {
  readonly orders?: readonly string[];
  readonly apiKeys?: readonly string[];
  readonly listLeases?: readonly string[];
  /** The orders table's status index (shared/status-index.ts `statusIndex`), granted on its own ARN. */
  readonly ordersStatusIndex?: readonly string[];
};

/**
 * A secret of the stage that the function alone reads (GetSecretValue on it and nothing else):
 * `{"<generatedKey>": <random>}`, made by Secrets Manager at the first deploy, removed with the stack.
 */
export type FunctionSecret = {
  /** Its construct id in the stack: its logical id, part of the deployed contract. */
  readonly id: string;
  readonly name: (stage: StageName) => string;
  readonly description: (stage: StageName) => string;
  readonly generatedKey: string;
  /** Why it is rotated by hand (cdk-nag's AwsSolutions-SMG4 asks for a rotation Lambda). */
  readonly manualRotation: string;
};

/**
 * Which of the stage's limits hold an operation (infra/stage-config.ts): `request`, the stage's
 * `throttling` and each key's over every operation; `list` and `pagedList`, besides those, the
 * stage's and each tier's `listThrottling` or `pagedListThrottling` as this method's own limit
 * (API Gateway's per-method throttle, a usage plan's per-method throttle, the local gateway's
 * second token bucket: infra/tiers.ts, methodLimitFields).
 */
export type LimitClass = 'request' | MethodLimitClass;

/** A service level objective of one operation: the share of its answers within a latency, over 30 days. */
export type OperationSlo = {
  /** Its burn-rate alarms are `<id>FastBurn`, `<id>MediumBurn` and `<id>SlowBurn` (infra/cdk/monitoring/slo.ts). */
  readonly id: string;
  /** What it counts, as the alarms' descriptions say it: "cancels (API Gateway latency of DELETE)". */
  readonly what: string;
  /** The latency judged: API Gateway's of the route, or one of the service's own metrics (shared/observability.ts). */
  readonly measure: 'gatewayLatency' | { readonly metricName: string };
  readonly objective: PerStage<{ readonly percent: number; readonly thresholdMs: number }>;
};

/**
 * A function's alarms beyond those every function has (its version's guards `<Name>Errors`,
 * `<Name>RefusedShare` and, a route's, `<Name>BusyShare`; `<Name>Throttles`, and a reserving
 * one's `<Name>ShedShare`: infra/cdk/monitoring/). `nearTimeout`:
 * `<Name>NearTimeout`, a ticket when one invocation ran for 80 % of its timeout (a long-running
 * operation); `invocation` is how the alarm's description names one. `latencyP99`: the guard
 * `alarm`, the p99 of its version's answers (`AnswerLatency`: to a buffered answer, or a streamed
 * one's first byte) at or above `thresholdMs` of the stage in three of five minutes; the dashboard
 * graphs a buffered route's API Gateway latency as `<name> latency (ms)`. `errorsLessClientEnds`:
 * its `<Name>Errors` reads Lambda's Errors less its version's `StalledListsCut` and `ListsLeftEarly`:
 * a stream cut because its client stopped reading ends in an error Lambda counts, and one its
 * client left may (AWS does not say), but neither client is a failure of the function. `slo`: an
 * objective of its own, with burn-rate alarms.
 */
export type FunctionAlarms = {
  readonly nearTimeout?: { readonly invocation: string };
  readonly latencyP99?: { readonly name: string; readonly alarm: string; readonly thresholdMs: PerStage<number> };
  readonly errorsLessClientEnds?: true;
  readonly slo?: OperationSlo;
};

/** What every function of the service states: the authorizer's contract is this. */
export type FunctionContract = {
  /** The name its settings, deployment, alarms and per-version metrics go by: `authorizer`, or the operation's. */
  readonly name: string;
  readonly function: FunctionSettings;
  readonly tableAccess: TableAccess;
  readonly secrets?: readonly FunctionSecret[];
  readonly alarms: FunctionAlarms;
  /** The page whose `### <alarm id>` sections its alarms' descriptions point to (checked at synth). */
  readonly runbook: string;
  /**
   * Its known answers (shared/known-answers.ts): a module beside the contract, relative to the
   * repository root, exporting `knownAnswers`. The registry collects them into the pre-traffic
   * hook's and the synthetic client's bundles and into `npm run smoke`, so a new function's checks
   * run without touching any runner; the handler never imports them.
   */
  readonly knownAnswers: string;
};

/** An operation of the API: a function behind a route. */
export type OperationContract = FunctionContract & {
  readonly route: Route;
  readonly throttling: LimitClass;
  /** How long API Gateway waits for the function: at most 29 s buffered, 15 minutes streamed (the route's `streaming`). */
  readonly integrationTimeoutSeconds: number;
  /** Its part of the published contract (infra/openapi/document.ts). */
  readonly published: PublishedOperation;
};
