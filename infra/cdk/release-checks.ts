/**
 * Checks that see what clients see, so that a release answering wrong without failing is stopped
 * and an outage without a 5xx still pages (docs/decisions.md, "Release checks and the synthetic client"):
 *
 * - PreTrafficHook: CodeDeploy's BeforeAllowTraffic hook on every `live` alias of the stage
 *   (functions/pre-traffic-hook/handler.ts). It invokes the new versions before any traffic moves.
 * - SyntheticClient: a CloudWatch Synthetics canary calling the stage's public URL every minute
 *   with the stage's canary key, running the smoke check's code (functions/canary/handler.ts).
 *
 * Both run the known-answer suite of every function of the registry (each contract's
 * `knownAnswers`): their bundles are built here from an entry generated from the registry, which
 * imports each function's suite and hands them to the runner (`suiteEntry`), so nothing that ships
 * imports the registry and no runner keeps a list of its own.
 *
 * The canary key lives in Secrets Manager (`npm run keys -- canary`); the stack names the secret
 * and grants read access to it, and never holds its value.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Arn, ArnFormat, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as synthetics from 'aws-cdk-lib/aws-synthetics';
import { Construct } from 'constructs';
import { type BuildOptions, buildSync } from 'esbuild';
import { canaryKeySecretName } from '../../shared/canary-key.ts';
import { canaryTimeoutSeconds, liveAliasName, probeSlots } from '../../shared/probes.ts';
import { addStageLogGroup } from './log-groups.ts';
import { canaryName, preTrafficHookFunctionName, serviceName } from '../names.ts';
import { grantProbeWrites } from './probe-access.ts';
import type { StageConfig } from '../stage-config.ts';
import { knownAnswerFiles } from '../registry.ts';
import { functionBundling, functionNodeOptions, repoRoot, type StoreFunction } from './store-function.ts';

/** Secrets Manager appends six random characters to a secret's name in its ARN. */
export const secretArn = (scope: Construct, name: string) =>
  Arn.format(
    { service: 'secretsmanager', resource: 'secret', resourceName: `${name}-??????`, arnFormat: ArnFormat.COLON_RESOURCE_NAME },
    Stack.of(scope),
  );

const notInVpc = {
  id: 'cdk-validator-cfnguard::lambda_inside_vpc_check',
  reason:
    'Not in a VPC (CT.LAMBDA.PR.3): it calls only AWS APIs (Lambda, DynamoDB, Secrets Manager, CodeDeploy) or the public API, over HTTPS with IAM-signed requests; a VPC would add endpoints or a NAT gateway for no isolation gained.',
};

/** A runner of the known-answer suite: its module, and the factory its entry hands every suite to. */
type SuiteRunner = { readonly file: string; readonly factory: string };
export const hookRunner: SuiteRunner = { file: resolve(repoRoot, 'functions/pre-traffic-hook/handler.ts'), factory: 'hookHandler' };
export const canaryRunner: SuiteRunner = { file: resolve(repoRoot, 'functions/canary/handler.ts'), factory: 'canaryHandler' };

/** The entry of a runner's bundle: each function's suite imported, in the registry's order, handed to the runner as `handler`. */
export const suiteEntry = (runner: SuiteRunner, knownAnswers: readonly string[]): string =>
  [
    `import { ${runner.factory} } from ${JSON.stringify(runner.file)};`,
    ...knownAnswers.map((file, i) => `import { knownAnswers as suite${i} } from ${JSON.stringify(file)};`),
    `export const handler = ${runner.factory}([${knownAnswers.map((_, i) => `suite${i}`).join(', ')}]);`,
  ].join('\n');

/** Bundles a runner with the suites into `outfile`, by esbuild from the generated entry (no file of it in the repository). */
const bundleSuiteRunner = (runner: SuiteRunner, knownAnswers: readonly string[], options: BuildOptions & { outfile: string }) => {
  buildSync({
    stdin: { contents: suiteEntry(runner, knownAnswers), resolveDir: repoRoot, sourcefile: `${runner.factory}-entry.ts`, loader: 'ts' },
    bundle: true,
    platform: 'node',
    minify: true,
    logLevel: 'error',
    ...options,
  });
};

const builtBundles = new Map<string, string>();

/** A bundle built once per process and registry into a temporary folder (both stages and every test synth share it). */
const builtOnce = (key: string, build: (dir: string) => void): string => {
  const known = builtBundles.get(key);
  if (known !== undefined) return known;
  const dir = mkdtempSync(join(tmpdir(), 'store-orders-suite-runner-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  build(dir);
  builtBundles.set(key, dir);
  return dir;
};

/** The hook's bundle (index.mjs exporting `handler`, as every function's), with the registry's suites; returns `outputDir`. */
export const bundlePreTrafficHook = (outputDir: string, knownAnswers: readonly string[] = knownAnswerFiles()): string => {
  bundleSuiteRunner(hookRunner, knownAnswers, {
    outfile: join(outputDir, 'index.mjs'),
    format: 'esm',
    target: functionBundling.target,
    mainFields: [...(functionBundling.mainFields ?? [])],
    sourcemap: true,
    sourcesContent: false,
    banner: { js: functionBundling.banner! },
  });
  return outputDir;
};

export type PreTrafficHookProps = {
  readonly config: StageConfig;
  /** Every function of the registry: the hook finds each new version in VERSION_ARNS, by the function's name. */
  readonly targets: readonly StoreFunction[];
  /** Every function's known-answer module, in the registry's order (infra/registry.ts knownAnswerFiles). */
  readonly knownAnswers: readonly string[];
  readonly ordersTable: dynamodb.ITable;
  /** `arn:…:execute-api:<region>:<account>:<api id>/<stage>`: the authorizer's methodArn begins so. */
  readonly methodArnPrefix: string;
  readonly logsKey: kms.IKey;
};

/**
 * One hook function per stage, the BeforeAllowTraffic hook of every function's deployment group:
 * whichever alias moves, it checks every function's new version together, as API Gateway will use them.
 */
export class PreTrafficHook extends Construct {
  readonly function: lambda.Function;
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: PreTrafficHookProps) {
    super(scope, id);
    const logGroup = addStageLogGroup(this, 'Logs', { config: props.config, encryptionKey: props.logsKey });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Store Orders pre-traffic hook (${props.config.stage})`,
    });
    logGroup.grantWrite(this.role);
    this.function = this.addFunction(props, logGroup);
    this.grantInvokeAnyVersion(props);
    this.grantReads(props);
    Validations.of(this.function).acknowledge(notInVpc);
  }

  /** The hook's function: each new version's ARN in its environment (VERSION_ARNS, by function name), and what its checks read. */
  private addFunction(props: PreTrafficHookProps, logGroup: logs.ILogGroup): lambda.Function {
    const { config } = props;
    const bundle = builtOnce(`hook ${props.knownAnswers.join(' ')}`, (dir) => bundlePreTrafficHook(dir, props.knownAnswers));
    return new lambda.Function(this, 'Function', {
      // CodeDeploy's managed policy for Lambda deployments may invoke functions named so.
      functionName: preTrafficHookFunctionName(config.stage),
      description: 'Store Orders: checks the new versions before CodeDeploy moves an alias (BeforeAllowTraffic)',
      code: lambda.Code.fromAsset(bundle),
      handler: 'index.handler',
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      // The list check reads the bounded list a probe is answered (shared/probes.ts), whatever the table holds.
      memorySize: 512,
      // Its checks stop 30 s before this (functions/pre-traffic-hook/handler.ts, reportMarginMs), so it always reports.
      timeout: Duration.minutes(5),
      role: this.role,
      logGroup,
      environment: {
        // No function is named here: a function added to or taken from the registry changes this map alone.
        VERSION_ARNS: Stack.of(this).toJsonString(
          Object.fromEntries(props.targets.map((fn) => [fn.name, fn.function.currentVersion.functionArn])),
        ),
        ORDERS_TABLE: props.ordersTable.tableName,
        CANARY_KEY_SECRET: canaryKeySecretName(config.stage),
        SERVICE_NAME: serviceName(config.stage),
        METHOD_ARN_PREFIX: props.methodArnPrefix,
        // The list check lists one more time than a canary key's slots: a version that keeps its lease is refused.
        CANARY_CONCURRENT_LISTS: String(config.tiers.canary.concurrentLists),
        NODE_OPTIONS: functionNodeOptions,
      },
    });
  }

  /**
   * Any published version of each target function, named by a statement that never changes: a grant
   * naming the new versions would change the role's policy seconds before CodeDeploy runs the hook,
   * and IAM applies a policy change only eventually. Never the `live` alias (what clients reach)
   * nor `$LATEST`: an explicit Deny, since `<function>:*` matches both (Lambda's resource ARNs,
   * lambda-api-permissions-ref). A version number is all IAM can tell, so the version `live` points
   * at stays invokable by its number: the hook sends it only requests that change nothing
   * (functions/pre-traffic-hook/prober.ts). And `lambda:GetAlias` (its resource is the function):
   * which version `live` points at, the one a busy new version is compared with.
   */
  private grantInvokeAnyVersion(props: PreTrafficHookProps) {
    const functions = props.targets;
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: functions.map((fn) => `${fn.function.functionArn}:*`),
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        effect: iam.Effect.DENY,
        actions: ['lambda:InvokeFunction'],
        resources: functions.flatMap((fn) => [`${fn.function.functionArn}:${liveAliasName}`, `${fn.function.functionArn}:$LATEST`]),
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({ actions: ['lambda:GetAlias'], resources: functions.map((fn) => fn.function.functionArn) }),
    );
    Validations.of(this.role).acknowledge(
      ...functions.map((fn) => ({
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(fn.function.node.defaultChild as lambda.CfnFunction)}.Arn>:*]`,
        reason:
          "Any published version of this one function: the hook invokes the version a deploy is about to publish, and a grant naming that version would change the role's policy seconds before the hook runs (IAM is eventually consistent).",
      })),
    );
  }

  /**
   * What the checks read and write: the orders table's description (the item count the list is
   * judged by), the hook's own probe orders and ProbeBusy (./probe-access.ts), the canary key's secret.
   */
  private grantReads(props: PreTrafficHookProps) {
    // The table's ARN alone: Table.grant would add `<table>/index/*` (the orders table has an index).
    iam.Grant.addToPrincipal({ grantee: this.role, actions: ['dynamodb:DescribeTable'], resourceArns: [props.ordersTable.tableArn] });
    grantProbeWrites(this.role, props.ordersTable, { slots: probeSlots.preTrafficHook, acknowledgeWildcard: true });
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: [secretArn(this, canaryKeySecretName(props.config.stage))],
      }),
    );
  }

  /** Makes this the BeforeAllowTraffic hook of `fn`'s deployments, updated before its alias moves. */
  guard(fn: StoreFunction) {
    fn.deploymentGroup.addPreHook(this.function);
    // The alias's update starts the deployment: the hook must carry the new versions by then.
    fn.alias.node.addDependency(this.function);
  }
}

/**
 * The canary's script with the registry's suites, bundled as CommonJS at nodejs/node_modules/canary.js
 * (the Synthetics Node.js layout); returns `outputDir`.
 */
export const bundleCanaryScript = (outputDir: string, knownAnswers: readonly string[] = knownAnswerFiles()): string => {
  bundleSuiteRunner(canaryRunner, knownAnswers, {
    outfile: resolve(outputDir, 'nodejs/node_modules/canary.js'),
    format: 'cjs',
    target: 'node22',
  });
  return outputDir;
};

/**
 * The canary's STATUS_FILTER_CHECK: whether it asks for a filtered v2 page, which only a stage whose
 * status index exists (and is ACTIVE: docs/reference/stages.md#the-status-index) can answer with 200.
 */
export const statusFilterCheck = (config: Pick<StageConfig, 'stage' | 'ordersStatusIndex' | 'statusFilterChecks'>): 'on' | 'off' => {
  if (config.statusFilterChecks && !config.ordersStatusIndex)
    throw new Error(
      `stage ${config.stage}: statusFilterChecks needs ordersStatusIndex (the filtered page answers 503 without the index; docs/reference/stages.md#the-status-index)`,
    );
  return config.statusFilterChecks ? 'on' : 'off';
};

/** How often the synthetic client runs: its tier's daily quota holds every run of a day (test/unit/canary-quota.test.ts). */
export const canaryIntervalMinutes = 1;

/**
 * Synthetics' Node.js runtime without a browser, on Lambda's Node.js 22 (the suite reads every int64
 * exactly without JSON.parse's source text, so it would also run on Node.js 20's syn-nodejs-3.x;
 * the newer runtime stays). aws-cdk-lib 2.276 names runtimes up to syn-nodejs-3.1 only, hence the
 * name written out.
 */
export const canaryRuntime = new synthetics.Runtime('syn-nodejs-4.1', synthetics.RuntimeFamily.NODEJS);

export type SyntheticClientProps = {
  readonly config: StageConfig;
  /** The stage's public base URL (…/v1). */
  readonly baseUrl: string;
  /** Where its orders of its own are written, cancelled through the API and deleted. */
  readonly ordersTable: dynamodb.ITable;
  /** Every function's known-answer module, in the registry's order (infra/registry.ts knownAnswerFiles). */
  readonly knownAnswers: readonly string[];
};

/** The stage's synthetic client: a Synthetics canary running the read-only smoke check every minute. */
export class SyntheticClient extends Construct {
  readonly canary: synthetics.Canary;
  readonly canaryName: string;

  constructor(scope: Construct, id: string, props: SyntheticClientProps) {
    super(scope, id);
    const { config } = props;
    this.canaryName = canaryName(config.stage);
    const retentionDays = config.stage === 'production' ? 30 : 7;
    const artifacts = new s3.Bucket(this, 'Artifacts', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      lifecycleRules: [{ expiration: Duration.days(retentionDays) }],
      // Kept when the stack is deleted: CloudFormation cannot delete a bucket that holds objects,
      // and this one always does, so DESTROY would end `cdk destroy` in DELETE_FAILED. Its run logs
      // expire by the lifecycle rule; docs/deploying.md ("Tear staging down") deletes it afterwards.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.canary = new synthetics.Canary(this, 'Canary', {
      canaryName: this.canaryName,
      runtime: canaryRuntime,
      test: synthetics.Test.custom({
        handler: 'canary.handler',
        // Built once per synth process, then staged as an ordinary asset. (An asset with `bundling`
        // breaks Synthetics' own check of the layout when a synth skips bundling.)
        code: synthetics.Code.fromAsset(
          builtOnce(`canary ${props.knownAnswers.join(' ')}`, (dir) => bundleCanaryScript(dir, props.knownAnswers)),
        ),
      }),
      schedule: synthetics.Schedule.rate(Duration.minutes(canaryIntervalMinutes)),
      timeout: Duration.seconds(canaryTimeoutSeconds),
      environmentVariables: {
        BASE_URL: props.baseUrl,
        CANARY_KEY_SECRET: canaryKeySecretName(config.stage),
        STATUS_FILTER_CHECK: statusFilterCheck(config),
        ORDERS_TABLE: props.ordersTable.tableName,
        SERVICE_NAME: serviceName(config.stage),
      },
      artifactsBucketLocation: { bucket: artifacts },
      successRetentionPeriod: Duration.days(retentionDays),
      failureRetentionPeriod: Duration.days(retentionDays),
      provisionedResourceCleanup: true,
    });
    this.canary.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: [secretArn(this, canaryKeySecretName(config.stage))],
      }),
    );
    // Its role already has `*` acknowledged below (PutMetricData into CloudWatchSynthetics).
    grantProbeWrites(this.canary.role, props.ordersTable, { slots: probeSlots.syntheticClient, acknowledgeWildcard: false });
    this.acknowledgeFindings(artifacts);
  }

  /** cdk-nag and Control Tower findings on the canary's run-log bucket and the role Synthetics requires. */
  private acknowledgeFindings(artifacts: s3.Bucket) {
    const onlyRunLogs =
      "It holds only the canary's own run logs (no client data), written by the canary's role and expired by a lifecycle rule";
    Validations.of(artifacts).acknowledge(
      {
        id: 'AwsSolutions::AwsSolutions-S1',
        reason: `${onlyRunLogs}: an access log would record nothing but the canary, in a second bucket.`,
      },
      { id: 'cdk-validator-cfnguard::s3_bucket_logging_enabled_check', reason: `${onlyRunLogs}: no access log (CT.S3.PR.2) needed.` },
      {
        id: 'cdk-validator-cfnguard::s3_bucket_default_encryption_kms_check',
        reason: `${onlyRunLogs}; SSE-S3 encrypts them, and a KMS key (CT.S3.PR.10) would add a grant to Synthetics' role and a per-request charge for nothing secret.`,
      },
      {
        id: 'cdk-validator-cfnguard::s3_bucket_versioning_enabled_check',
        reason: `${onlyRunLogs}; each object is written once, so versioning (CT.S3.PR.11) keeps nothing.`,
      },
      {
        id: 'cdk-validator-cfnguard::s3_bucket_object_lock_enabled_check',
        reason: `${onlyRunLogs}; Object Lock (CT.S3.PR.9) would stop the lifecycle rule from expiring them.`,
      },
      {
        id: 'cdk-validator-cfnguard::s3_event_notifications_enabled_check',
        reason: `${onlyRunLogs}; nothing reacts to a new run log (CT.S3.PR.4): the canary's metrics and its alarm do.`,
      },
    );
    const stack = Stack.of(this);
    const agnostic = Token.isUnresolved(stack.region);
    const logsArn = `arn:${agnostic ? '<AWS::Partition>' : stack.partition}:logs:${agnostic ? '<AWS::Region>' : stack.region}:<AWS::AccountId>:log-group:/aws/lambda/cwsyn-*`;
    Validations.of(this.canary.role).acknowledge(
      {
        id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
        reason:
          "The role CDK gives a Synthetics canary: s3:ListAllMyBuckets (Synthetics checks its artifact bucket; the action has no resource level) and cloudwatch:PutMetricData, which has none either and is limited by condition to the CloudWatchSynthetics namespace (and, for the probe's ProbeBusy, the StoreOrders/Probes namespace).",
      },
      {
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::<${stack.getLogicalId(artifacts.node.defaultChild as s3.CfnBucket)}.Arn>/*]`,
        reason: "s3:PutObject on any key of the canary's own artifact bucket: Synthetics names each run's objects itself.",
      },
      {
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::${logsArn}]`,
        reason:
          'Synthetics names its Lambda function (and so its log group) cwsyn-<canary name>-<random id> itself: the prefix is as narrow as it can be.',
      },
    );
  }
}
