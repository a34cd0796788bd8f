/**
 * `npm run preflight`: each check passing and failing against AWS APIs mocked with
 * aws-sdk-client-mock (no local server exists for STS, SSM, Lambda's account settings, API
 * Gateway's account, CloudFormation or SNS), and CloudWatch's DescribeAlarms over the wire, from
 * the local fake (../lib/fake-aws.ts). DynamoDB's DescribeTable is mocked here, for the whole run's
 * sake; the table checks run against real tables in test/integration/preflight-tables.test.ts.
 */
import { APIGatewayClient, GetAccountCommand } from '@aws-sdk/client-api-gateway';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { CloudFormationClient, DescribeStacksCommand, GetTemplateCommand, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import {
  DescribeContinuousBackupsCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { GetAccountSettingsCommand, GetFunctionConcurrencyCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { DescribeSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  minimumBootstrapVersion,
  type PreflightClients,
  report,
  runPreflight,
  unreservedMinimum,
} from '../../infra/ops/deploy-preflight.ts';
import { stages } from '../../infra/stage-config.ts';
import { evaluate } from '../lib/iam.ts';
import { accounts, permissionsPolicy, pipelineRole, region as pipelineRegion } from '../lib/pipeline-policies.ts';
import * as sns_ from 'aws-cdk-lib/aws-sns';
import { createApp } from '../../infra/cdk/app.ts';
import type { StoreOrdersStack } from '../../infra/cdk/store-orders-stack.ts';
import { cdkJsonContext, logicalId, sharedApp, tempDir } from '../lib/cdk.ts';
import { startFakeAws } from '../lib/fake-aws.ts';

const account = '123456789012';
const region = 'eu-west-1';
const config = stages.production;
// Synthesized once, at load (not within a test's timeout), as the other infra tests do.
const productionTemplate = sharedApp().template('production').toJSON();
const bootstrapVersionRule = productionTemplate.Rules.CheckBootstrapVersion;
type Resource = { Type: string; Properties: Record<string, unknown> };
const resources = productionTemplate.Resources as Record<string, Resource>;
/** The alarms production's CodeDeploy deployment groups watch, by name, read from the template. */
const deploymentGroupAlarms = [
  ...new Set(
    Object.values(resources)
      .filter((resource) => resource.Type === 'AWS::CodeDeploy::DeploymentGroup')
      .flatMap((group) => (group.Properties.AlarmConfiguration as { Alarms: { Name: { Ref: string } }[] }).Alarms)
      .map(({ Name }) => resources[Name.Ref]!.Properties.AlarmName as string),
  ),
];
const fake = await startFakeAws();
afterAll(() => fake.close());
const topicArn = `arn:aws:sns:${region}:${account}:StoreOrders-production-MonitoringAlarmTopic-Ab12`;
const ticketTopicArn = `arn:aws:sns:${region}:${account}:StoreOrders-production-MonitoringTicketTopic-Gh78`;
const budgetTopicArn = `arn:aws:sns:${region}:${account}:StoreOrders-budget-production-AlarmTopic-Cd34`;
const budgetTemplate = sharedApp().app.synth().getStackByName('StoreOrders-budget-production').template as {
  Resources: Record<string, Resource>;
};
const productionResourcesById = productionTemplate.Resources as Record<string, Resource>;
const logicalIdOf = (template: { Resources: Record<string, Resource> }, type: string, name?: string) =>
  Object.entries(template.Resources).find(
    ([, resource]) => resource.Type === type && (name === undefined || resource.Properties.TableName === name),
  )![0];
/** The logical id of the production topic whose construct id is `id` (AlarmTopic, TicketTopic). */
const topicLogicalId = (id: string) =>
  Object.entries(productionResourcesById).find(([logical, resource]) => resource.Type === 'AWS::SNS::Topic' && logical.includes(id))![0];
/** What ListStackResources says of a deployed production stack and budget stack: the reserving functions, the tables, the topics. */
const productionResources = [
  { ResourceType: 'AWS::Lambda::Function', LogicalResourceId: 'ListOrdersFunctionC0FFEE11', PhysicalResourceId: 'list-fn' },
  { ResourceType: 'AWS::Lambda::Function', LogicalResourceId: 'ListOrdersPagedFunctionD00DAD22', PhysicalResourceId: 'paged-fn' },
  ...[config.ordersTableName, config.apiKeysTableName].map((name) => ({
    ResourceType: 'AWS::DynamoDB::Table',
    LogicalResourceId: logicalIdOf({ Resources: productionResourcesById }, 'AWS::DynamoDB::Table', name),
    PhysicalResourceId: name,
  })),
  { ResourceType: 'AWS::SNS::Topic', LogicalResourceId: topicLogicalId('AlarmTopic'), PhysicalResourceId: topicArn },
  { ResourceType: 'AWS::SNS::Topic', LogicalResourceId: topicLogicalId('TicketTopic'), PhysicalResourceId: ticketTopicArn },
].map((summary) => ({ ...summary, ResourceStatus: 'UPDATE_COMPLETE' as const, LastUpdatedTimestamp: new Date() }));
const budgetResources = [
  {
    ResourceType: 'AWS::SNS::Topic',
    LogicalResourceId: logicalIdOf(budgetTemplate, 'AWS::SNS::Topic'),
    PhysicalResourceId: budgetTopicArn,
    ResourceStatus: 'CREATE_COMPLETE' as const,
    LastUpdatedTimestamp: new Date(),
  },
];
/** A table as DescribeTable describes what the stack declares: a numeric id, on demand, no stream, no index, protected, a KMS key. */
const liveTable = (name: string, extra: Record<string, unknown> = {}) => ({
  Table: {
    TableName: name,
    TableStatus: 'ACTIVE' as const,
    KeySchema: [{ AttributeName: name === config.ordersTableName ? 'id' : 'keyHash', KeyType: 'HASH' as const }],
    AttributeDefinitions: [
      {
        AttributeName: name === config.ordersTableName ? 'id' : 'keyHash',
        AttributeType: (name === config.ordersTableName ? 'N' : 'S') as 'N' | 'S',
      },
    ],
    BillingModeSummary: { BillingMode: 'PAY_PER_REQUEST' as const },
    DeletionProtectionEnabled: true,
    SSEDescription: { Status: 'ENABLED' as const, SSEType: 'KMS' as const, KMSMasterKeyArn: `arn:aws:kms:${region}:${account}:key/0a1b` },
    ...extra,
  },
});

const sts = mockClient(STSClient);
const ssm = mockClient(SSMClient);
const cloudFormation = mockClient(CloudFormationClient);
const lambda = mockClient(LambdaClient);
const apiGateway = mockClient(APIGatewayClient);
const sns = mockClient(SNSClient);
const secrets = mockClient(SecretsManagerClient);
const dynamoDb = mockClient(DynamoDBClient);
const clients: PreflightClients = {
  sts: new STSClient({ region }),
  ssm: new SSMClient({ region }),
  cloudFormation: new CloudFormationClient({ region }),
  lambda: new LambdaClient({ region }),
  apiGateway: new APIGatewayClient({ region }),
  sns: new SNSClient({ region }),
  secrets: new SecretsManagerClient({ region }),
  cloudWatch: new CloudWatchClient({
    region,
    endpoint: fake.endpoints.AWS_ENDPOINT_URL_CLOUDWATCH,
    credentials: { accessKeyId: 'fake', secretAccessKey: 'fake' },
  }),
  dynamoDb: new DynamoDBClient({ region }),
};

const awsError = (name: string, message: string) => Object.assign(new Error(message), { name });
const missingStack = (stackName: string) => awsError('ValidationError', `Stack with id ${stackName} does not exist`);

/** An account ready for its second production deploy: every check passes. */
beforeEach(() => {
  for (const mock of [sts, ssm, cloudFormation, lambda, apiGateway, sns, secrets, dynamoDb]) mock.reset();
  fake.alarms.clear();
  fake.alarmQueries.length = 0;
  for (const [index, name] of deploymentGroupAlarms.entries())
    fake.alarms.set(
      name,
      index % 2 === 0
        ? { state: 'OK', reason: 'Threshold Crossed' }
        : { state: 'INSUFFICIENT_DATA', reason: 'Unchecked: Initial alarm creation' },
    );
  secrets.on(DescribeSecretCommand, { SecretId: 'store-orders/production/canary-key' }).resolves({
    ARN: `arn:aws:secretsmanager:${region}:${account}:secret:store-orders/production/canary-key-AbCdEf`,
    Name: 'store-orders/production/canary-key',
  });
  sts.on(GetCallerIdentityCommand).resolves({ Account: account });
  ssm.on(GetParameterCommand, { Name: '/cdk-bootstrap/hnb659fds/version' }).resolves({ Parameter: { Value: '27' } });
  lambda.on(GetAccountSettingsCommand).resolves({ AccountLimit: { ConcurrentExecutions: 1000, UnreservedConcurrentExecutions: 990 } });
  cloudFormation.on(ListStackResourcesCommand).rejects(missingStack('StoreOrders-account'));
  cloudFormation.on(ListStackResourcesCommand, { StackName: config.stackName }).resolves({ StackResourceSummaries: productionResources });
  cloudFormation
    .on(ListStackResourcesCommand, { StackName: 'StoreOrders-budget-production' })
    .resolves({ StackResourceSummaries: budgetResources });
  // The stack last deployed this very template.
  cloudFormation.on(GetTemplateCommand, { StackName: config.stackName }).resolves({ TemplateBody: JSON.stringify(productionTemplate) });
  for (const name of [config.ordersTableName, config.apiKeysTableName])
    dynamoDb.on(DescribeTableCommand, { TableName: name }).resolves(liveTable(name));
  dynamoDb.on(DescribeContinuousBackupsCommand).resolves({
    ContinuousBackupsDescription: {
      ContinuousBackupsStatus: 'ENABLED',
      PointInTimeRecoveryDescription: { PointInTimeRecoveryStatus: 'ENABLED' },
    },
  });
  dynamoDb.on(DescribeTimeToLiveCommand).resolves({ TimeToLiveDescription: { TimeToLiveStatus: 'DISABLED' } });
  lambda.on(GetFunctionConcurrencyCommand, { FunctionName: 'list-fn' }).resolves({ ReservedConcurrentExecutions: 10 });
  lambda.on(GetFunctionConcurrencyCommand, { FunctionName: 'paged-fn' }).resolves({ ReservedConcurrentExecutions: 10 });
  apiGateway.on(GetAccountCommand).resolves({ cloudwatchRoleArn: `arn:aws:iam::${account}:role/ApiGatewayCloudWatchRole` });
  cloudFormation.on(DescribeStacksCommand).resolves({
    Stacks: [
      {
        StackName: config.stackName,
        StackStatus: 'UPDATE_COMPLETE',
        CreationTime: new Date(),
        Outputs: [
          { OutputKey: 'AlarmTopicArn', OutputValue: topicArn },
          { OutputKey: 'TicketTopicArn', OutputValue: ticketTopicArn },
        ],
      },
    ],
  });
  for (const arn of [topicArn, ticketTopicArn, budgetTopicArn])
    sns.on(ListSubscriptionsByTopicCommand, { TopicArn: arn }).resolves({
      Subscriptions: [{ SubscriptionArn: `${arn}:0b1c`, Protocol: 'email', Endpoint: 'oncall@example.com', TopicArn: arn }],
    });
});

const run = (options: Partial<Parameters<typeof runPreflight>[2]> = {}) =>
  runPreflight(config, clients, { region, qualifier: 'hnb659fds', ...options });
const result = async (check: string, options: Partial<Parameters<typeof runPreflight>[2]> = {}) =>
  (await run(options)).find((r) => r.check === check);

describe('npm run preflight', () => {
  it('passes every check on an account ready for the deploy, and says where the deploy goes', async () => {
    const results = await run();
    expect(results.map(({ check, ok }) => [check, ok])).toEqual([
      ['target', true],
      ['CDK bootstrap', true],
      [`table ${config.ordersTableName}`, true],
      [`table ${config.apiKeysTableName}`, true],
      ['Lambda concurrency', true],
      ['API Gateway logging role', true],
      ['alarm delivery: StoreOrders-production/Monitoring/AlarmTopic', true],
      ['alarm delivery: StoreOrders-production/Monitoring/TicketTopic', true],
      ['alarm delivery: StoreOrders-budget-production/AlarmTopic', true],
      ['canary key', true],
      ['guard alarms', true],
    ]);
    expect(results[0]?.message).toBe(`the deploy goes to account ${account}, region ${region}`);
    expect(report('production', results)).toContain('All checks passed.');
  });

  describe('canary key', () => {
    it('fails, with the command that stores it, when the stage is deployed but its canary key is not stored', async () => {
      secrets.on(DescribeSecretCommand).rejects(awsError('ResourceNotFoundException', "Secrets Manager can't find the specified secret."));
      expect(await result('canary key')).toEqual({
        check: 'canary key',
        ok: false,
        message: 'store-orders/production/canary-key is not stored: the pre-traffic hook would report Failed and every deploy roll back',
        fix: 'npm run keys -- canary --stage production',
      });
    });

    it('fails when the secret is scheduled for deletion', async () => {
      secrets.on(DescribeSecretCommand).resolves({ Name: 'store-orders/production/canary-key', DeletedDate: new Date() });
      expect(await result('canary key')).toMatchObject({ ok: false, fix: expect.stringContaining('restore-secret') });
    });

    it('passes before the first deploy, saying when to store the key', async () => {
      cloudFormation.on(DescribeStacksCommand).rejects(missingStack(config.stackName));
      expect(await result('canary key')).toMatchObject({
        ok: true,
        message: expect.stringContaining('right after it, before the next deploy'),
      });
      expect(secrets.calls()).toHaveLength(0);
    });

    it('passes while the stack holds only tables cdk import adopted (no outputs yet): its first whole deploy is still to come', async () => {
      cloudFormation.on(DescribeStacksCommand).resolves({
        Stacks: [{ StackName: config.stackName, StackStatus: 'IMPORT_COMPLETE', CreationTime: new Date() }],
      });
      expect(await result('canary key')).toMatchObject({ ok: true, message: expect.stringContaining('not deployed yet') });
      expect(secrets.calls()).toHaveLength(0);
    });

    it("reads only the secret's metadata, never its value", async () => {
      await run();
      expect(secrets.calls().map((call) => call.args[0].constructor.name)).toEqual(['DescribeSecretCommand']);
    });
  });

  describe('guard alarms', () => {
    it('asks CloudWatch for exactly the alarms the deployment groups watch', async () => {
      expect(deploymentGroupAlarms.length).toBeGreaterThan(3);
      await run();
      expect(fake.alarmQueries.map((names) => [...names].sort())).toEqual([[...deploymentGroupAlarms].sort()]);
    });

    it('passes on OK and INSUFFICIENT_DATA, naming each state', async () => {
      const found = await result('guard alarms');
      expect(found).toMatchObject({ ok: true, message: expect.stringContaining(`${deploymentGroupAlarms[0]} OK`) });
      expect(found?.message).toContain(`${deploymentGroupAlarms[1]} INSUFFICIENT_DATA`);
    });

    it('fails naming each alarm in ALARM with its reason, and the way out', async () => {
      const [first, second] = deploymentGroupAlarms as [string, string];
      fake.alarms.set(first, { state: 'ALARM', reason: 'Threshold Crossed: 1 datapoint [3.0] was greater than the threshold (1.0).' });
      fake.alarms.set(second, { state: 'ALARM', reason: 'Threshold Crossed: 2 datapoints were greater than the threshold (0.0).' });
      const found = await result('guard alarms');
      expect(found).toMatchObject({
        ok: false,
        message: `2 of the ${deploymentGroupAlarms.length} guard alarms in ALARM, so CodeDeploy would roll every deploy of production back: ${first} (Threshold Crossed: 1 datapoint [3.0] was greater than the threshold (1.0).); ${second} (Threshold Crossed: 2 datapoints were greater than the threshold (0.0).)`,
        fix: expect.stringContaining('ignoreDeploymentAlarms=true'),
      });
      expect(report('production', [found!])).toContain(`FAIL guard alarms: 2 of the`);
    });

    it('passes when no guard alarm exists yet (a first deploy), saying so', async () => {
      fake.alarms.clear();
      expect(await result('guard alarms')).toEqual({
        check: 'guard alarms',
        ok: true,
        message: `none of the ${deploymentGroupAlarms.length} guard alarms exists yet (a first deploy creates them)`,
      });
    });

    it('names the guard alarms a deploy will add, beside the states of those that exist', async () => {
      const added = deploymentGroupAlarms.at(-1)!;
      fake.alarms.delete(added);
      expect(await result('guard alarms')).toMatchObject({
        ok: true,
        message: expect.stringMatching(new RegExp(`not created yet \\(this deploy adds them\\): ${added}$`)),
      });
    });
  });

  describe('target', () => {
    it('fails without a region, instead of letting the CLI fall back to us-east-1, and asks nothing else', async () => {
      const results = await run({ region: undefined });
      expect(results).toEqual([expect.objectContaining({ check: 'target', ok: false, message: expect.stringContaining('us-east-1') })]);
      expect(sts.calls()).toHaveLength(0);
    });

    it('fails without usable credentials', async () => {
      sts.on(GetCallerIdentityCommand).rejects(awsError('ExpiredToken', 'The security token included in the request is expired'));
      expect(await result('target')).toMatchObject({
        ok: false,
        message: expect.stringContaining('ExpiredToken'),
        fix: expect.stringContaining('sign in'),
      });
    });

    it('fails when the credentials or region are not the expected target', async () => {
      expect(await result('target', { expected: { account: '999999999999' } })).toMatchObject({
        ok: false,
        message: `the credentials are for account ${account}, not 999999999999`,
      });
      expect(await result('target', { expected: { region: 'us-east-1' } })).toMatchObject({
        ok: false,
        message: expect.stringContaining(`region ${region}, not us-east-1`),
      });
      expect((await result('target', { expected: { account, region } }))?.ok).toBe(true);
    });
  });

  describe('CDK bootstrap', () => {
    it('fails when the account and region are not bootstrapped, with the bootstrap command', async () => {
      ssm.on(GetParameterCommand).rejects(awsError('ParameterNotFound', 'not found'));
      expect(await result('CDK bootstrap')).toMatchObject({ ok: false, fix: `npx cdk bootstrap aws://${account}/${region}` });
    });

    it('fails on a bootstrap stack older than the templates accept', async () => {
      ssm.on(GetParameterCommand).resolves({ Parameter: { Value: String(minimumBootstrapVersion - 1) } });
      expect(await result('CDK bootstrap')).toMatchObject({
        ok: false,
        message: expect.stringContaining(`need ${minimumBootstrapVersion}`),
      });
    });

    it('reads the qualifier the stacks use', async () => {
      ssm.on(GetParameterCommand).rejects(awsError('ParameterNotFound', 'not found'));
      ssm.on(GetParameterCommand, { Name: '/cdk-bootstrap/custom1/version' }).resolves({ Parameter: { Value: '27' } });
      expect((await result('CDK bootstrap', { qualifier: 'custom1' }))?.ok).toBe(true);
    });

    it('asks for the version the synthesized templates require', () => {
      const refused = bootstrapVersionRule.Assertions[0].Assert['Fn::Not'][0]['Fn::Contains'][0] as string[];
      expect(Math.max(...refused.map(Number)) + 1).toBe(minimumBootstrapVersion);
    });
  });

  describe('Lambda concurrency', () => {
    it("fails on a new account's quota of 10, with the exact quota request", async () => {
      lambda.on(GetAccountSettingsCommand).resolves({ AccountLimit: { ConcurrentExecutions: 10, UnreservedConcurrentExecutions: 10 } });
      cloudFormation.on(ListStackResourcesCommand).rejects(missingStack(config.stackName));
      expect(await result('Lambda concurrency')).toMatchObject({
        ok: false,
        message: expect.stringContaining(`below its minimum value`),
        fix: `aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384 --desired-value 1000 --region ${region}  (then wait until it is granted)`,
      });
    });

    it("counts the list's and the v2 page's current reservations as their own on a redeploy, and needs both plus AWS's 100 on a first deploy", async () => {
      const reserved = config.listReservedConcurrency + config.pagedListReservedConcurrency;
      // 100 unreserved after this stage already reserves its 20: a redeploy keeps 100.
      lambda.on(GetAccountSettingsCommand).resolves({ AccountLimit: { ConcurrentExecutions: 120, UnreservedConcurrentExecutions: 100 } });
      expect((await result('Lambda concurrency'))?.ok).toBe(true);
      // The first deploy into that account needs 100 + both reservations unreserved.
      cloudFormation.on(ListStackResourcesCommand).rejects(missingStack(config.stackName));
      lambda.on(GetAccountSettingsCommand).resolves({
        AccountLimit: { ConcurrentExecutions: 120, UnreservedConcurrentExecutions: unreservedMinimum + reserved - 1 },
      });
      expect((await result('Lambda concurrency'))?.ok).toBe(false);
      lambda.on(GetAccountSettingsCommand).resolves({
        AccountLimit: { ConcurrentExecutions: 120, UnreservedConcurrentExecutions: unreservedMinimum + reserved },
      });
      expect((await result('Lambda concurrency'))?.ok).toBe(true);
    });
  });

  describe('API Gateway logging role', () => {
    it('passes when unset before StoreOrders-account exists (the deploy sets it)', async () => {
      apiGateway.on(GetAccountCommand).resolves({});
      cloudFormation.on(DescribeStacksCommand, { StackName: 'StoreOrders-account' }).rejects(missingStack('StoreOrders-account'));
      expect(await result('API Gateway logging role')).toMatchObject({
        ok: true,
        message: expect.stringContaining('StoreOrders-account sets it'),
      });
    });

    it('fails when unset although StoreOrders-account exists, with the command that sets it', async () => {
      apiGateway.on(GetAccountCommand).resolves({});
      expect(await result('API Gateway logging role')).toMatchObject({
        ok: false,
        fix: expect.stringContaining('aws apigateway update-account'),
      });
    });
  });

  describe('alarm delivery', () => {
    const stageTopic = 'alarm delivery: StoreOrders-production/Monitoring/AlarmTopic';
    const ticketTopic = 'alarm delivery: StoreOrders-production/Monitoring/TicketTopic';
    const budgetTopic = 'alarm delivery: StoreOrders-budget-production/AlarmTopic';

    it('fails when nobody has confirmed a subscription to the stage alarm topic', async () => {
      sns.on(ListSubscriptionsByTopicCommand, { TopicArn: topicArn }).resolves({
        Subscriptions: [{ SubscriptionArn: 'PendingConfirmation', Protocol: 'email', Endpoint: 'oncall@example.com', TopicArn: topicArn }],
      });
      expect(await result(stageTopic)).toMatchObject({
        ok: false,
        message: expect.stringContaining(`no confirmed subscription to ${topicArn}`),
        fix: expect.stringContaining('aws sns subscribe'),
      });
    });

    it('warns, and blocks no stage, when nobody has confirmed a subscription to the budget topic: spend alerts reach no one', async () => {
      sns.on(ListSubscriptionsByTopicCommand, { TopicArn: budgetTopicArn }).resolves({ Subscriptions: [] });
      expect(await result(budgetTopic)).toMatchObject({
        ok: true,
        warn: true,
        message: expect.stringContaining(`no confirmed subscription to ${budgetTopicArn}`),
        fix: expect.stringContaining('aws sns subscribe'),
      });
      const results = await runPreflight(config, clients, { region, qualifier: 'hnb659fds' });
      expect(report('production', results)).toMatch(
        /^WARN alarm delivery: StoreOrders-budget-production\/AlarmTopic: no confirmed subscription/m,
      );
      expect((await result(stageTopic))?.ok).toBe(true);
    });

    it('fails when nobody has confirmed a subscription to the ticket topic, naming it', async () => {
      sns.on(ListSubscriptionsByTopicCommand, { TopicArn: ticketTopicArn }).resolves({ Subscriptions: [] });
      expect(await result(ticketTopic)).toMatchObject({
        ok: false,
        message: expect.stringContaining(`no confirmed subscription to ${ticketTopicArn}`),
      });
      expect((await result(stageTopic))?.ok).toBe(true);
    });

    it("fails when the stage config's alarm address has not confirmed, even beside other subscribers", async () => {
      sns.on(ListSubscriptionsByTopicCommand, { TopicArn: topicArn }).resolves({
        Subscriptions: [
          { SubscriptionArn: 'PendingConfirmation', Protocol: 'email', Endpoint: 'alarms@example.com', TopicArn: topicArn },
          { SubscriptionArn: `${topicArn}:1`, Protocol: 'https', Endpoint: 'https://pager.example.com', TopicArn: topicArn },
        ],
      });
      const withEmail = { ...config, alarms: { ...config.alarms, email: 'alarms@example.com' } };
      const results = await runPreflight(withEmail, clients, { region, qualifier: 'hnb659fds' });
      expect(results.find(({ check }) => check === stageTopic)).toMatchObject({
        ok: false,
        message: expect.stringContaining('alarms@example.com has not confirmed'),
      });
    });

    it('passes before the first deploy, saying what to do after it', async () => {
      cloudFormation.on(ListStackResourcesCommand, { StackName: config.stackName }).rejects(missingStack(config.stackName));
      expect(await result(stageTopic)).toMatchObject({ ok: true, message: expect.stringContaining('subscribe on-call') });
    });

    it('passes where the organisation refused the budget stack, saying no stage depends on it', async () => {
      cloudFormation
        .on(ListStackResourcesCommand, { StackName: 'StoreOrders-budget-production' })
        .rejects(missingStack('StoreOrders-budget-production'));
      expect(await result(budgetTopic)).toMatchObject({
        ok: true,
        message: expect.stringContaining('an organisation may refuse AWS Budgets to this account, and no stage depends on it'),
      });
    });

    it('finds every topic in the templates the deploy sends, not in a list: a topic a release adds is checked once deployed', async () => {
      const dir = tempDir('store-orders-preflight-topics-');
      const app = createApp(
        { outdir: dir, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], 'aws:cdk:enable-path-metadata': true } },
        undefined,
        { checks: false },
      );
      const stack = app.node.findChild(config.stackName) as StoreOrdersStack;
      const addedTopicId = logicalId(stack, new sns_.Topic(stack, 'AddedTopic', { displayName: 'added by a release' }));
      app.synth();
      const addedArn = `arn:aws:sns:${region}:${account}:StoreOrders-production-AddedTopic-Ef56`;
      cloudFormation.on(ListStackResourcesCommand, { StackName: config.stackName }).resolves({
        StackResourceSummaries: [
          ...productionResources,
          {
            ResourceType: 'AWS::SNS::Topic',
            LogicalResourceId: addedTopicId,
            PhysicalResourceId: addedArn,
            ResourceStatus: 'CREATE_COMPLETE',
            LastUpdatedTimestamp: new Date(),
          },
        ],
      });
      sns.on(ListSubscriptionsByTopicCommand, { TopicArn: addedArn }).resolves({ Subscriptions: [] });
      const results = await run({ app: dir });
      expect(results.find(({ check }) => check === 'alarm delivery: StoreOrders-production/AddedTopic')).toMatchObject({
        ok: false,
        message: expect.stringContaining(`no confirmed subscription to ${addedArn}`),
      });
      expect(results.find(({ check }) => check === stageTopic)?.ok).toBe(true);
    });
  });

  describe('tables', () => {
    it('refuses a deploy whose template would drop an index the live table has', async () => {
      dynamoDb.on(DescribeTableCommand, { TableName: config.ordersTableName }).resolves(
        liveTable(config.ordersTableName, {
          GlobalSecondaryIndexes: [
            { IndexName: 'status-index', IndexStatus: 'ACTIVE', KeySchema: [{ AttributeName: 'status', KeyType: 'HASH' }] },
          ],
        }),
      );
      const found = await result(`table ${config.ordersTableName}`);
      expect(found).toMatchObject({
        ok: false,
        message: expect.stringContaining(`this template removes status-index (ACTIVE) from ${config.ordersTableName}`),
      });
      expect(report('production', [found!])).toContain(`FAIL table ${config.ordersTableName}: this template removes status-index`);
    });

    it('refuses a first deploy into an account whose orders table exists already, with the adoption steps', async () => {
      cloudFormation.on(ListStackResourcesCommand, { StackName: config.stackName }).rejects(missingStack(config.stackName));
      expect(await result(`table ${config.ordersTableName}`)).toMatchObject({
        ok: false,
        fix: expect.stringContaining(`npx cdk import ${config.stackName} --resource-mapping import-production.json`),
      });
    });

    it('after a first deploy that failed and rolled back (its tables DELETE_COMPLETE in the stack), lets the retry create them again, as firstDeploy builds them', async () => {
      cloudFormation.on(ListStackResourcesCommand, { StackName: config.stackName }).resolves({
        StackResourceSummaries: productionResources.map((summary) => ({ ...summary, ResourceStatus: 'DELETE_COMPLETE' as const })),
      });
      dynamoDb.on(DescribeTableCommand).rejects(awsError('ResourceNotFoundException', 'Requested resource not found'));
      for (const name of [config.ordersTableName, config.apiKeysTableName])
        expect(await result(`table ${name}`, { firstDeploy: true })).toMatchObject({
          ok: true,
          message: expect.stringContaining("does not exist yet: the stack's create makes it, unprotected"),
        });
      // Built as an ordinary deploy, production's create would protect its tables: a failed create could not remove them.
      expect(await result(`table ${config.ordersTableName}`)).toMatchObject({
        ok: false,
        fix: expect.stringContaining(`npx cdk deploy ${config.stackName} -c firstDeploy=true`),
      });
    });

    it('reads the templates of the assembly given (--app), which may be an older release’s', async () => {
      await expect(run({ app: tempDir('store-orders-no-assembly-') })).resolves.toContainEqual(
        expect.objectContaining({ check: 'tables and alarm delivery', ok: false, message: expect.stringContaining('manifest.json') }),
      );
    });
  });

  it('reports a refused read as a failed check that names the missing permission, not a crash', async () => {
    lambda.on(GetAccountSettingsCommand).rejects(awsError('AccessDeniedException', 'not authorized to perform: lambda:GetAccountSettings'));
    const results = await run();
    expect(results.find(({ check }) => check === 'Lambda concurrency')).toMatchObject({
      ok: false,
      fix: expect.stringContaining('read-only permissions'),
    });
    expect(report('production', results)).toMatch(/FAIL Lambda concurrency: AccessDeniedException[\s\S]*1 check\(s\) failed/);
  });
});

/**
 * Every AWS call the preflight makes (recorded from a passing run, not listed by hand), as IAM
 * would see it from the pipeline's deploy identity: docs/deploying.md says the pipeline runs the
 * preflight with that identity's own credentials, so its policy must allow each call.
 */
describe("the pipeline's deploy identity may make every call the preflight makes", () => {
  const stage = 'production' as const;
  const arn = {
    stack: (name: string) => `arn:aws:cloudformation:${pipelineRegion}:${accounts[stage]}:stack/${name}/0a1b2c3d`,
    function: (name: string) => `arn:aws:lambda:${pipelineRegion}:${accounts[stage]}:function:${name}`,
  };
  /** IAM action and resource of each command the preflight sends; sts:GetCallerIdentity needs no permission. */
  const asIam: Record<string, (input: Record<string, string>) => { action: string; resource: string } | undefined> = {
    GetCallerIdentityCommand: () => undefined,
    GetParameterCommand: ({ Name }) => ({
      action: 'ssm:GetParameter',
      resource: `arn:aws:ssm:${pipelineRegion}:${accounts[stage]}:parameter${Name}`,
    }),
    DescribeStacksCommand: ({ StackName }) => ({ action: 'cloudformation:DescribeStacks', resource: arn.stack(StackName!) }),
    ListStackResourcesCommand: ({ StackName }) => ({ action: 'cloudformation:ListStackResources', resource: arn.stack(StackName!) }),
    GetTemplateCommand: ({ StackName }) => ({ action: 'cloudformation:GetTemplate', resource: arn.stack(StackName!) }),
    GetAccountSettingsCommand: () => ({ action: 'lambda:GetAccountSettings', resource: '*' }),
    GetFunctionConcurrencyCommand: ({ FunctionName }) => ({
      action: 'lambda:GetFunctionConcurrency',
      resource: arn.function(FunctionName!),
    }),
    GetAccountCommand: () => ({ action: 'apigateway:GET', resource: `arn:aws:apigateway:${pipelineRegion}::/account` }),
    DescribeSecretCommand: ({ SecretId }) => ({
      action: 'secretsmanager:DescribeSecret',
      resource: `arn:aws:secretsmanager:${pipelineRegion}:${accounts[stage]}:secret:${SecretId}-AbCdEf`,
    }),
    DescribeAlarmsCommand: ({ AlarmName }) => ({
      action: 'cloudwatch:DescribeAlarms',
      resource: `arn:aws:cloudwatch:${pipelineRegion}:${accounts[stage]}:alarm:${AlarmName}`,
    }),
    // The topics and tables as named in the stage account (the mocks answer with another account's ARNs).
    ListSubscriptionsByTopicCommand: ({ TopicArn }) => ({
      action: 'sns:ListSubscriptionsByTopic',
      resource: `arn:aws:sns:${pipelineRegion}:${accounts[stage]}:${TopicArn!.split(':').pop()}`,
    }),
    ...Object.fromEntries(
      ['DescribeTable', 'DescribeContinuousBackups', 'DescribeTimeToLive'].map((action) => [
        `${action}Command`,
        ({ TableName }: Record<string, string>) => ({
          action: `dynamodb:${action}`,
          resource: `arn:aws:dynamodb:${pipelineRegion}:${accounts[stage]}:table/${TableName}`,
        }),
      ]),
    ),
  };

  it('allows each of them, in the stage account, by the policy docs/deploying.md gives (docs/pipeline)', async () => {
    await runPreflight(stages[stage], clients, { region: pipelineRegion, qualifier: 'hnb659fds' });
    const commands = [
      ...[sts, ssm, cloudFormation, lambda, apiGateway, sns, secrets, dynamoDb].flatMap((mock) =>
        mock.calls().map((call) => call.args[0] as unknown as { constructor: { name: string }; input: Record<string, string> }),
      ),
      // DescribeAlarms went to the fake over the wire: IAM authorizes it on each alarm it names.
      ...fake.alarmQueries.flat().map((AlarmName) => ({ constructor: { name: 'DescribeAlarmsCommand' }, input: { AlarmName } })),
    ];
    expect(fake.alarmQueries.flat()).toHaveLength(deploymentGroupAlarms.length);
    expect(commands.length).toBeGreaterThan(5);
    const verdicts = await Promise.all(
      commands.map(async (command) => {
        const name = command.constructor.name;
        const toIam = asIam[name];
        if (toIam === undefined) return [name, 'no IAM mapping in this test: add one'];
        const request = toIam(command.input);
        if (request === undefined) return [name, 'Allowed'];
        const verdict = await evaluate({
          principal: `arn:aws:sts::${accounts[stage]}:assumed-role/${pipelineRole(stage).split('/').pop()}/preflight`,
          action: request.action,
          resource: request.resource,
          resourceAccount: accounts[stage],
          identityPolicies: [permissionsPolicy(stage)],
        });
        return [name, verdict];
      }),
    );
    expect(verdicts).toEqual(commands.map((command) => [command.constructor.name, 'Allowed']));
  });
});
