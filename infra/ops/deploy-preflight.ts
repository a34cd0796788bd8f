/**
 * `npm run preflight -- --stage <name>`: read-only checks of the target account and region before
 * `cdk deploy`, each with what it found and, when it fails, the fix. It runs with the credentials
 * and region the deploy will use (the stacks are environment-agnostic: that is where they land).
 * Exit code 1 when a check fails, 2 on a usage error. The pipeline runs it before each deploy.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { APIGatewayClient, GetAccountCommand } from '@aws-sdk/client-api-gateway';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { CloudFormationClient, DescribeStacksCommand, ListStackResourcesCommand, type Stack } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetAccountSettingsCommand, GetFunctionConcurrencyCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { DescribeSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { canaryKeySecretName } from '../../shared/canary-key.ts';
import { registry } from '../registry.ts';
import { type StageConfig, type StageName, stages } from '../stage-config.ts';
import { accountStackName, functionConstructId } from '../names.ts';
import { type CheckResult, errorName, failedRead } from './check-results.ts';
import { describeAlarms, guardAlarmNames } from './guard-alarms.ts';
import { templateChecks } from './template-checks.ts';

export type PreflightClients = {
  readonly sts: STSClient;
  readonly ssm: SSMClient;
  readonly cloudFormation: CloudFormationClient;
  readonly lambda: LambdaClient;
  readonly apiGateway: APIGatewayClient;
  readonly sns: SNSClient;
  readonly secrets: SecretsManagerClient;
  readonly cloudWatch: CloudWatchClient;
  readonly dynamoDb: DynamoDBClient;
};

/** What the target must be, when the caller knows (e.g. an organisation's staging account). */
export type Expected = { readonly account?: string; readonly region?: string };

/** AWS keeps at least this much of an account's Lambda concurrency unreserved (Lambda, "Configuring reserved concurrency"). */
export const unreservedMinimum = 100;

/**
 * The oldest bootstrap stack the synthesized templates accept: their CheckBootstrapVersion rule
 * refuses versions 1–5 (test/infra/preflight.test.ts reads it from the template).
 */
export const minimumBootstrapVersion = 6;

/** The Service Quotas code of Lambda's "Concurrent executions" quota. */
export const concurrencyQuotaCode = 'L-B99A9384';

/** The bootstrap qualifier the stacks' synthesizer uses: cdk.json's, else the CDK's default. */
export const bootstrapQualifier = (): string => {
  const context = JSON.parse(readFileSync(join(import.meta.dirname, '../..', 'cdk.json'), 'utf8')).context ?? {};
  return String(context['@aws-cdk/core:bootstrapQualifier'] ?? 'hnb659fds');
};

const isMissingStack = (error: unknown) =>
  errorName(error) === 'ValidationError' && /does not exist/.test(String((error as Error).message));

/** Whether the stage's stack has been deployed whole: a stack that holds only tables `cdk import` adopted has no outputs. */
const isStageDeployed = (stack: Stack | undefined): boolean => (stack?.Outputs ?? []).length > 0;

/** The stack as CloudFormation has it, or undefined before its first deploy. */
const describeStack = async (clients: PreflightClients, stackName: string): Promise<Stack | undefined> => {
  try {
    return (await clients.cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
  } catch (error) {
    if (isMissingStack(error)) return undefined;
    throw error;
  }
};

const checkTarget = async (clients: PreflightClients, region: string | undefined, expected: Expected) => {
  const check = 'target';
  if (region === undefined)
    return {
      result: {
        check,
        ok: false,
        message: 'no region is configured: the deploy would go to the CDK CLI’s fallback, us-east-1',
        fix: 'set AWS_REGION (or the region of your AWS profile) to the region the stage lives in',
      },
    };
  let account: string;
  try {
    account = (await clients.sts.send(new GetCallerIdentityCommand({}))).Account ?? '';
  } catch (error) {
    return {
      result: {
        check,
        ok: false,
        message: `no usable AWS credentials (${errorName(error)}: ${(error as Error).message})`,
        fix: 'sign in to the target account (aws sso login, a profile, or the pipeline role) and run again',
      },
    };
  }
  const wrong = [
    expected.account !== undefined && expected.account !== account ? `account ${account}, not ${expected.account}` : undefined,
    expected.region !== undefined && expected.region !== region ? `region ${region}, not ${expected.region}` : undefined,
  ].filter((problem) => problem !== undefined);
  if (wrong.length > 0)
    return {
      account,
      result: {
        check,
        ok: false,
        message: `the credentials are for ${wrong.join(' and ')}`,
        fix: 'use credentials and a region of the intended target',
      },
    };
  return { account, result: { check, ok: true, message: `the deploy goes to account ${account}, region ${region}` } };
};

const checkBootstrap = async (clients: PreflightClients, account: string, region: string, qualifier: string): Promise<CheckResult> => {
  const check = 'CDK bootstrap';
  const fix = `npx cdk bootstrap aws://${account}/${region}${qualifier === 'hnb659fds' ? '' : ` --qualifier ${qualifier}`}`;
  try {
    const { Parameter } = await clients.ssm.send(new GetParameterCommand({ Name: `/cdk-bootstrap/${qualifier}/version` }));
    const version = Number(Parameter?.Value);
    if (!(version >= minimumBootstrapVersion))
      return {
        check,
        ok: false,
        message: `bootstrap version ${Parameter?.Value}, the templates need ${minimumBootstrapVersion} or later`,
        fix,
      };
    return { check, ok: true, message: `bootstrapped (qualifier ${qualifier}, version ${version})` };
  } catch (error) {
    if (errorName(error) !== 'ParameterNotFound') throw error;
    return { check, ok: false, message: `${account}/${region} is not bootstrapped (qualifier ${qualifier})`, fix };
  }
};

/**
 * The logical-id prefixes of the functions that reserve concurrency, with what they reserve: those
 * whose contract sets reservedConcurrency (the list's and the v2 page's), named `<Operation>Function`
 * by the stack.
 */
const reservingFunctions = (config: StageConfig) =>
  registry.operations.flatMap(({ name, function: settings }) =>
    settings.reservedConcurrency === undefined ? [] : [{ id: functionConstructId(name), reserves: settings.reservedConcurrency(config) }],
  );

/** What the stage's functions reserve today (a redeploy re-uses it), 0 before the first deploy. */
const currentReservations = async (clients: PreflightClients, config: StageConfig): Promise<number> => {
  try {
    const { StackResourceSummaries = [] } = await clients.cloudFormation.send(
      new ListStackResourcesCommand({ StackName: config.stackName }),
    );
    const reserving = StackResourceSummaries.filter(
      (resource) =>
        resource.ResourceType === 'AWS::Lambda::Function' &&
        reservingFunctions(config).some(({ id }) => resource.LogicalResourceId?.startsWith(id)) &&
        resource.PhysicalResourceId !== undefined,
    );
    let total = 0;
    for (const fn of reserving) {
      const { ReservedConcurrentExecutions } = await clients.lambda.send(
        new GetFunctionConcurrencyCommand({ FunctionName: fn.PhysicalResourceId }),
      );
      total += ReservedConcurrentExecutions ?? 0;
    }
    return total;
  } catch (error) {
    if (isMissingStack(error)) return 0;
    throw error;
  }
};

const checkConcurrency = async (clients: PreflightClients, config: StageConfig, region: string): Promise<CheckResult> => {
  const check = 'Lambda concurrency';
  const { AccountLimit } = await clients.lambda.send(new GetAccountSettingsCommand({}));
  const quota = AccountLimit?.ConcurrentExecutions ?? 0;
  const unreserved = AccountLimit?.UnreservedConcurrentExecutions ?? 0;
  const reserving = reservingFunctions(config).reduce((sum, { reserves }) => sum + reserves, 0);
  const left = unreserved + (await currentReservations(clients, config)) - reserving;
  if (left >= unreservedMinimum)
    return {
      check,
      ok: true,
      message: `quota ${quota}, ${left} left unreserved after the lists' and pages' ${reserving} (AWS keeps ${unreservedMinimum})`,
    };
  const desired = Math.max(1000, quota + unreservedMinimum - left);
  return {
    check,
    ok: false,
    message: `the account's concurrency quota is ${quota} with ${unreserved} unreserved: reserving ${reserving} for the lists and pages would leave ${left}, and Lambda refuses to go below ${unreservedMinimum} (the deploy would fail with "decreases account's UnreservedConcurrentExecution below its minimum value")`,
    fix: `aws service-quotas request-service-quota-increase --service-code lambda --quota-code ${concurrencyQuotaCode} --desired-value ${desired} --region ${region}  (then wait until it is granted)`,
  };
};

const checkLoggingRole = async (clients: PreflightClients): Promise<CheckResult> => {
  const check = 'API Gateway logging role';
  const { cloudwatchRoleArn } = await clients.apiGateway.send(new GetAccountCommand({}));
  if (cloudwatchRoleArn) return { check, ok: true, message: `set: ${cloudwatchRoleArn}` };
  if ((await describeStack(clients, accountStackName)) === undefined)
    return { check, ok: true, message: `not set yet: ${accountStackName} sets it, deployed first with the stage` };
  return {
    check,
    ok: false,
    message: `not set, although ${accountStackName} exists: someone removed it, and the stage's execution logging would fail to deploy`,
    fix: `aws apigateway update-account --patch-operations op=replace,path=/cloudwatchRoleArn,value=<the ApiGatewayCloudWatchRole of ${accountStackName}>`,
  };
};

/**
 * The canary key's secret: without it the pre-traffic hook reports Failed and every deploy rolls
 * back. Only its metadata is read (DescribeSecret), never its value. Before the stage's first
 * deploy it cannot exist yet (the key tool needs the stage's tables and usage plans).
 */
const checkCanaryKey = async (clients: PreflightClients, config: StageConfig): Promise<CheckResult> => {
  const check = 'canary key';
  const name = canaryKeySecretName(config.stage);
  const fix = `npm run keys -- canary --stage ${config.stage}`;
  // A stack that holds only the tables `cdk import` adopted has no outputs yet: not deployed either.
  if (!isStageDeployed(await describeStack(clients, config.stackName)))
    return {
      check,
      ok: true,
      message: `${config.stackName} is not deployed yet: its first deploy needs no canary key; run ${fix} right after it, before the next deploy`,
    };
  try {
    const secret = await clients.secrets.send(new DescribeSecretCommand({ SecretId: name }));
    if (secret.DeletedDate !== undefined)
      return {
        check,
        ok: false,
        message: `${name} is scheduled for deletion: the pre-traffic hook cannot read it, so every deploy would roll back`,
        fix: `aws secretsmanager restore-secret --secret-id ${name}, or ${fix}`,
      };
    return { check, ok: true, message: `${name} is stored` };
  } catch (error) {
    if (errorName(error) !== 'ResourceNotFoundException') throw error;
    return {
      check,
      ok: false,
      message: `${name} is not stored: the pre-traffic hook would report Failed and every deploy roll back`,
      fix,
    };
  }
};

/**
 * The guard alarms' states: one already in ALARM makes CodeDeploy stop and roll back every deploy
 * of the stage (the deployment groups roll back on `deploymentInAlarm`). OK and INSUFFICIENT_DATA
 * pass; an alarm that does not exist yet (the first deploy, or one this deploy adds) passes too.
 */
const checkGuardAlarms = async (clients: PreflightClients, config: StageConfig): Promise<CheckResult> => {
  const check = 'guard alarms';
  const names = await guardAlarmNames(config);
  const alarms = await describeAlarms(clients.cloudWatch, names);
  const missing = names.filter((name) => !alarms.some((alarm) => alarm.AlarmName === name));
  const firing = alarms.filter((alarm) => alarm.StateValue === 'ALARM');
  if (firing.length > 0)
    return {
      check,
      ok: false,
      message: `${firing.length} of the ${names.length} guard alarms in ALARM, so CodeDeploy would roll every deploy of ${config.stage} back: ${firing.map((alarm) => `${alarm.AlarmName} (${alarm.StateReason ?? 'no reason given'})`).join('; ')}`,
      fix: 'find and end the cause first (docs/runbook.md, the alarm by name) and wait for OK; only an emergency fix ships while one fires: cdk deploy -c ignoreDeploymentAlarms=true (docs/deploying.md#stop-or-roll-back-a-deploy)',
    };
  if (missing.length === names.length)
    return { check, ok: true, message: `none of the ${names.length} guard alarms exists yet (a first deploy creates them)` };
  const states = alarms.map((alarm) => `${alarm.AlarmName} ${alarm.StateValue}`).join(', ');
  const notYet = missing.length === 0 ? '' : `; not created yet (this deploy adds them): ${missing.join(', ')}`;
  return { check, ok: true, message: `none in ALARM: ${states}${notYet}` };
};

/** Every check, in order; after a failed target check the others are skipped (they would ask the wrong account). */
export const runPreflight = async (
  config: StageConfig,
  clients: PreflightClients,
  options: {
    readonly region: string | undefined;
    readonly expected?: Expected;
    readonly qualifier?: string;
    /** The cloud assembly the deploy sends (`--app`), else this checkout's templates. */
    readonly app?: string;
    /** This checkout's templates as `cdk deploy -c firstDeploy=true` builds them (`--first-deploy`). */
    readonly firstDeploy?: boolean;
  },
): Promise<CheckResult[]> => {
  const target = await checkTarget(clients, options.region, options.expected ?? {});
  if (!target.result.ok || target.account === undefined || options.region === undefined) return [target.result];
  const region = options.region;
  const guarded = async (check: string, run: () => Promise<CheckResult>): Promise<CheckResult> => {
    try {
      return await run();
    } catch (error) {
      return failedRead(check, error);
    }
  };
  // A template that cannot be read fails one check; the account's own checks still run.
  const { tables, topics } = await templateChecks(clients, config, options).catch((error: unknown) => ({
    tables: [failedRead('tables and alarm delivery', error)],
    topics: [],
  }));
  return [
    target.result,
    await guarded('CDK bootstrap', () => checkBootstrap(clients, target.account!, region, options.qualifier ?? bootstrapQualifier())),
    ...tables,
    await guarded('Lambda concurrency', () => checkConcurrency(clients, config, region)),
    await guarded('API Gateway logging role', () => checkLoggingRole(clients)),
    ...topics,
    await guarded('canary key', () => checkCanaryKey(clients, config)),
    await guarded('guard alarms', () => checkGuardAlarms(clients, config)),
  ];
};

/** One line per check, the fix under a failed one (or a warning). */
export const report = (stage: string, results: readonly CheckResult[]): string =>
  [
    `Preflight of ${stage}:`,
    ...results.map(
      ({ check, ok, warn, message, fix }) =>
        `${ok ? (warn ? 'WARN' : 'ok  ') : 'FAIL'} ${check}: ${message}${fix ? `\n       fix: ${fix}` : ''}`,
    ),
    results.every(({ ok }) => ok)
      ? 'All checks passed.'
      : `${results.filter(({ ok }) => !ok).length} check(s) failed: fix them before cdk deploy.`,
  ].join('\n');

const usage = `Usage: npm run preflight -- --stage <${Object.keys(stages).join('|')}> [--app <cloud assembly dir> | --first-deploy] [--expect-account <id>] [--expect-region <region>]

Read-only checks of the account and region the AWS credentials and region in use point at
(AWS_PROFILE, AWS_REGION, ...), which is where cdk deploy would put the stage. The templates the
deploy would send are those of --app (the cdk.out it deploys: the pipeline's, or an older
release's), else this checkout's, synthesized in memory (with --first-deploy, as the stack's create
cdk deploy -c firstDeploy=true builds them).`;

const main = async () => {
  const { values } = parseArgs({
    options: {
      stage: { type: 'string' },
      app: { type: 'string' },
      'first-deploy': { type: 'boolean' },
      'expect-account': { type: 'string' },
      'expect-region': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return void console.log(usage);
  const config = stages[values.stage as StageName] as StageConfig | undefined;
  if (config === undefined) {
    console.error(usage);
    process.exitCode = 2;
    return;
  }
  const sts = new STSClient({});
  const region = await sts.config.region().catch(() => undefined);
  const clientConfig = region === undefined ? {} : { region };
  const clients: PreflightClients = {
    sts,
    ssm: new SSMClient(clientConfig),
    cloudFormation: new CloudFormationClient(clientConfig),
    lambda: new LambdaClient(clientConfig),
    apiGateway: new APIGatewayClient(clientConfig),
    sns: new SNSClient(clientConfig),
    secrets: new SecretsManagerClient(clientConfig),
    cloudWatch: new CloudWatchClient(clientConfig),
    dynamoDb: new DynamoDBClient(clientConfig),
  };
  const results = await runPreflight(config, clients, {
    region,
    app: values.app,
    firstDeploy: values['first-deploy'] ?? false,
    expected: { account: values['expect-account'], region: values['expect-region'] },
  });
  console.log(report(config.stage, results));
  if (!results.every(({ ok }) => ok)) process.exitCode = 1;
};

if (import.meta.main) await main();
