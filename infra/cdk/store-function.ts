import { resolve } from 'node:path';
import { Duration, Validations } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { addStageLogGroup } from './log-groups.ts';
import type { FunctionContract, TableNames } from '../function-contract.ts';
import { functionEnvironment } from '../function-settings.ts';
import { liveAliasName } from '../../shared/probes.ts';
import type { StageConfig } from '../stage-config.ts';

export const repoRoot = resolve(import.meta.dirname, '../..');

/** How every function is bundled (test/perf/cold-start.ts bundles its floor with the same). */
export const functionBundling: BundlingOptions = {
  format: OutputFormat.ESM,
  target: 'node24',
  minify: true,
  sourceMap: true,
  // Stack traces need the mappings, not a copy of the sources.
  sourcesContent: false,
  // Bundle the SDK too: the version is the one tested, not whatever the runtime ships.
  externalModules: [],
  mainFields: ['module', 'main'],
  // Some CommonJS dependencies call require(); an ESM bundle has none unless it is made.
  banner:
    "import { createRequire as storeOrdersCreateRequire } from 'node:module'; const require = storeOrdersCreateRequire(import.meta.url);",
  forceDockerBundling: false,
};

/** The bundle's own setting (readable stack traces); the rest of the environment is what the local run gets too. */
export const functionNodeOptions = '--enable-source-maps';

/**
 * Lambda's logging controls for a function that wants only Lambda's warnings of its own (its
 * contract's `platformLogs`): the JSON log format, which system and application log levels need,
 * Lambda's system logs at WARN (no START, END or REPORT), and the application's level at the stage's,
 * so that Lambda drops none of the function's lines (an EMF line has no level: INFO to Lambda).
 * Lambda developer guide, "Configuring advanced logging controls for Lambda functions".
 */
const platformLogging = (settings: FunctionContract['function'], config: StageConfig): Partial<lambda.FunctionProps> =>
  settings.platformLogs === 'warnings'
    ? {
        loggingFormat: lambda.LoggingFormat.JSON,
        systemLogLevelV2: lambda.SystemLogLevel.WARN,
        applicationLogLevelV2: lambda.ApplicationLogLevel[config.logLevel],
      }
    : {};

export type StoreFunctionProps = {
  readonly config: StageConfig;
  /** Which function: its contract states its handler, memory, timeout and environment (infra/contract.ts). */
  readonly contract: FunctionContract;
  readonly tables: TableNames;
  /** How a new version reaches the `live` alias (CodeDeploy); shared by the stage's functions. */
  readonly deployment: {
    readonly application: codedeploy.ILambdaApplication;
    readonly config: codedeploy.ILambdaDeploymentConfig;
    readonly role: iam.IRole;
    /** Deploy even while a guard alarm is in ALARM (an emergency fix): `cdk deploy -c ignoreDeploymentAlarms=true`. */
    readonly ignoreAlarms: boolean;
  };
  /** The stage's key for its logs (infra/cdk/log-groups.ts). */
  readonly logsKey: kms.IKey;
  /** At most this many invocations at once (reserved concurrency); unset: no reservation, no cap. */
  readonly reservedConcurrency?: number;
};

/**
 * One Lambda function of the service with the runtime defaults every function shares:
 * Node.js 24 on arm64, a minified ESM bundle made by the local esbuild (no Docker) with the
 * AWS SDK inside, source maps, X-Ray, and a log group of its own with the stage's retention.
 * Its role may only write to that log group and send traces; data access is granted by the
 * stack, one action at a time.
 *
 * Callers invoke the `live` alias, never the function itself: each deploy publishes a version,
 * and CodeDeploy moves the alias to it (gradually where the stage says so), rolling back when
 * one of the guard alarms (`addGuardAlarm`) goes off during the shift.
 */
export class StoreFunction extends Construct {
  /** Which function: its name in the registry (infra/registry.ts). */
  readonly name: string;
  readonly function: NodejsFunction;
  readonly alias: lambda.Alias;
  readonly deploymentGroup: codedeploy.LambdaDeploymentGroup;
  readonly logGroup: logs.LogGroup;
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: StoreFunctionProps) {
    super(scope, id);
    const { config, contract } = props;
    this.name = contract.name;
    const settings = contract.function;

    this.logGroup = addStageLogGroup(this, 'Logs', { config, encryptionKey: props.logsKey });

    // An own role instead of AWSLambdaBasicExecutionRole, which may create and write any log group.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `${settings.description} (${config.stage})`,
    });
    this.logGroup.grantWrite(this.role);

    this.function = new NodejsFunction(this, 'Function', {
      entry: resolve(repoRoot, settings.handlerFile),
      handler: 'handler',
      projectRoot: repoRoot,
      depsLockFilePath: resolve(repoRoot, 'package-lock.json'),
      description: settings.description,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: settings.memorySize,
      timeout: Duration.seconds(settings.timeoutSeconds),
      ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrency }),
      role: this.role,
      logGroup: this.logGroup,
      tracing: lambda.Tracing.ACTIVE,
      ...platformLogging(settings, config),
      environment: { ...functionEnvironment(settings, config, props.tables), NODE_OPTIONS: functionNodeOptions },
      bundling: functionBundling,
    });

    this.alias = new lambda.Alias(this, 'LiveAlias', { aliasName: liveAliasName, version: this.function.currentVersion });
    this.deploymentGroup = new codedeploy.LambdaDeploymentGroup(this, 'Deployment', {
      application: props.deployment.application,
      alias: this.alias,
      deploymentConfig: props.deployment.config,
      role: props.deployment.role,
      ignoreAlarmConfiguration: props.deployment.ignoreAlarms,
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
    });

    Validations.of(this.function).acknowledge({
      id: 'cdk-validator-cfnguard::lambda_inside_vpc_check',
      reason:
        'Not in a VPC (CT.LAMBDA.PR.3): the functions reach nothing but DynamoDB, over HTTPS with IAM-signed requests, and no private resource. A VPC would add endpoints for DynamoDB, X-Ray and CodeDeploy hooks or a NAT gateway (about $15-70 a month per stage) and network cold-start cost, for no isolation gained.',
    });
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only the X-Ray actions added by Tracing.ACTIVE (xray:PutTraceSegments, xray:PutTelemetryRecords) use Resource "*": X-Ray does not support resource-level permissions for them.',
    });
  }

  /**
   * Alarms that stop a deploy in progress and roll it back when they go off. The alias depends on
   * them: a guard that names the version the alias moves to (infra/cdk/monitoring/guards.ts) is
   * updated before the alias, whose update starts the traffic shift (CloudFormation updates a
   * resource after those it depends on: docs/decisions/0138-guards-judge-the-new-version.md).
   */
  addGuardAlarms(alarms: readonly cloudwatch.IAlarm[]) {
    for (const alarm of alarms) {
      this.deploymentGroup.addAlarm(alarm);
      this.alias.node.addDependency(alarm);
    }
  }
}
