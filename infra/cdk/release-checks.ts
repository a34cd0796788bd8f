/**
 * Checks that see what clients see, so that a release answering wrong without failing is stopped
 * and an outage without a 5xx still pages (docs/decisions.md, "Release checks and the synthetic client"):
 *
 * - PreTrafficHook: CodeDeploy's BeforeAllowTraffic hook on every `live` alias of the stage
 *   (functions/pre-traffic-hook/handler.ts). It invokes the new versions before any traffic moves.
 * - SyntheticClient: a CloudWatch Synthetics canary calling the stage's public URL every minute
 *   with the stage's canary key, running the smoke check's code (functions/canary/handler.ts).
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
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as synthetics from 'aws-cdk-lib/aws-synthetics';
import { Construct } from 'constructs';
import { buildSync } from 'esbuild';
import { canaryKeySecretName } from '../../shared/canary-key.ts';
import { canaryTimeoutSeconds, probeSlots } from '../../shared/probes.ts';
import { addStageLogGroup } from './log-groups.ts';
import { canaryName, preTrafficHookFunctionName, serviceName } from '../names.ts';
import { grantProbeWrites } from './probe-access.ts';
import type { StageConfig } from '../stage-config.ts';
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

/** The hook's variable holding a function's new version: listOrders → LIST_ORDERS_VERSION_ARN (functions/pre-traffic-hook/handler.ts). */
export const versionArnVariable = (name: string): string => `${name.replace(/[A-Z]/g, (upper) => `_${upper}`).toUpperCase()}_VERSION_ARN`;

export type PreTrafficHookProps = {
  readonly config: StageConfig;
  /** Every function of the registry; the hook finds each new version in `<NAME>_VERSION_ARN` (e.g. LIST_ORDERS_VERSION_ARN). */
  readonly targets: readonly StoreFunction[];
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
  readonly function: NodejsFunction;
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

  /** The hook's function: each new version's ARN in its environment, and what its checks read. */
  private addFunction(props: PreTrafficHookProps, logGroup: logs.ILogGroup): NodejsFunction {
    const { config } = props;
    return new NodejsFunction(this, 'Function', {
      // CodeDeploy's managed policy for Lambda deployments may invoke functions named so.
      functionName: preTrafficHookFunctionName(config.stage),
      description: 'Store Orders: checks the new versions before CodeDeploy moves an alias (BeforeAllowTraffic)',
      entry: resolve(repoRoot, 'functions/pre-traffic-hook/handler.ts'),
      handler: 'handler',
      projectRoot: repoRoot,
      depsLockFilePath: resolve(repoRoot, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      // The list check reads the bounded list a probe is answered (shared/probes.ts), whatever the table holds.
      memorySize: 512,
      // Its checks stop 30 s before this (functions/pre-traffic-hook/handler.ts, reportMarginMs), so it always reports.
      timeout: Duration.minutes(5),
      role: this.role,
      logGroup,
      environment: {
        ...Object.fromEntries(props.targets.map((fn) => [versionArnVariable(fn.name), fn.function.currentVersion.functionArn])),
        ORDERS_TABLE: props.ordersTable.tableName,
        CANARY_KEY_SECRET: canaryKeySecretName(config.stage),
        SERVICE_NAME: serviceName(config.stage),
        METHOD_ARN_PREFIX: props.methodArnPrefix,
        // The list check lists one more time than a canary key's slots: a version that keeps its lease is refused.
        CANARY_CONCURRENT_LISTS: String(config.tiers.canary.concurrentLists),
        NODE_OPTIONS: functionNodeOptions,
      },
      bundling: functionBundling,
    });
  }

  /**
   * Any version of each target function, named by a statement that never changes: a grant naming
   * the new versions would change the role's policy seconds before CodeDeploy runs the hook, and
   * IAM applies a policy change only eventually. And the `live` alias of each (lambda:GetAlias,
   * whose resource is the function itself): which version it points at, the one a busy new
   * version is compared with.
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

/** The canary's script, bundled as CommonJS at nodejs/node_modules/canary.js (the Synthetics Node.js layout); returns `outputDir`. */
export const bundleCanaryScript = (outputDir: string): string => {
  buildSync({
    entryPoints: [resolve(repoRoot, 'functions/canary/handler.ts')],
    outfile: resolve(outputDir, 'nodejs/node_modules/canary.js'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    minify: true,
    logLevel: 'error',
  });
  return outputDir;
};

/**
 * Synthetics' Node.js runtime without a browser, on Lambda's Node.js 22 (the smoke check reads
 * through the client, which would also run on Node.js 20's syn-nodejs-3.x; the newer runtime stays).
 * aws-cdk-lib 2.276 names runtimes up to syn-nodejs-3.1 only, hence the name written out.
 */
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

export const canaryRuntime = new synthetics.Runtime('syn-nodejs-4.1', synthetics.RuntimeFamily.NODEJS);

let canaryScriptDir: string | undefined;

/** The canary's script, bundled into a temporary folder once per process (both stages and every test synth share it). */
const builtCanaryScript = (): string => {
  if (canaryScriptDir === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'store-orders-canary-script-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    canaryScriptDir = bundleCanaryScript(dir);
  }
  return canaryScriptDir;
};

export type SyntheticClientProps = {
  readonly config: StageConfig;
  /** The stage's public base URL (…/v1). */
  readonly baseUrl: string;
  /** Where its pending order of its own is written, cancelled through the API and deleted. */
  readonly ordersTable: dynamodb.ITable;
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
        code: synthetics.Code.fromAsset(builtCanaryScript()),
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
