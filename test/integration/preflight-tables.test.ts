/**
 * The deploy preflight's table checks (infra/ops/table-checks.ts) against real tables: DynamoDB
 * Local answers DescribeTable as DynamoDB does (key schema, billing mode, stream, indexes and their
 * status), and each stage's template is synthesized from the real stack with table names of this
 * test's own. CloudFormation's side (which tables the stack holds, the template it last deployed)
 * is the arguments the preflight reads from ListStackResources and GetTemplate.
 *
 * Two answers DynamoDB Local cannot give (measured): it answers DescribeContinuousBackups with
 * UnknownOperationException, and it accepts a table's SSESpecification but describes no
 * SSEDescription. The preflight's client here is therefore the one allowed mock
 * (aws-sdk-client-mock): DescribeTable and DescribeTimeToLive go through to DynamoDB Local,
 * DescribeTable's answer gets the SSEDescription DynamoDB gives a table created encrypted with a
 * KMS key, and DescribeContinuousBackups answers what each test sets.
 */
import { randomUUID } from 'node:crypto';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DescribeContinuousBackupsCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreOrdersStack } from '../../infra/cdk/store-orders-stack.ts';
import { ensureStatusIndex } from '../../infra/local/local-tables.ts';
import { type StageConfig, stages } from '../../infra/stage-config.ts';
import { checkTables } from '../../infra/ops/table-checks.ts';
import type { CfnTemplate, DeployedResource } from '../../infra/ops/stage-templates.ts';
import { cdkJsonContext } from '../lib/cdk.ts';
import { dynamoDbEndpoint } from '../lib/local-api.ts';

// Signed with the run's credentials (test/worker-environment.ts), the only ones its DynamoDB Local answers.
const dynamoDb = new DynamoDBClient({ endpoint: dynamoDbEndpoint(), region: 'us-east-1' });
afterAll(() => dynamoDb.destroy());

/** Tables created encrypted with a KMS key, and tables whose point-in-time recovery is off: what Local cannot describe. */
const kmsEncrypted = new Set<string>();
const pitrOff = new Set<string>();
/** The preflight's client: DynamoDB Local, and what Local cannot answer (see the header). */
const preflightDynamoDb = new DynamoDBClient({ endpoint: dynamoDbEndpoint(), region: 'us-east-1' });
const answers = mockClient(preflightDynamoDb);
answers.on(DescribeTableCommand).callsFake(async (input) => {
  const answer = await dynamoDb.send(new DescribeTableCommand(input));
  if (!kmsEncrypted.has(input.TableName)) return answer;
  const SSEDescription = { Status: 'ENABLED', SSEType: 'KMS', KMSMasterKeyArn: 'arn:aws:kms:us-east-1:123456789012:key/0a1b' };
  return { ...answer, Table: { ...answer.Table, SSEDescription } };
});
answers.on(DescribeTimeToLiveCommand).callsFake((input) => dynamoDb.send(new DescribeTimeToLiveCommand(input)));
answers.on(DescribeContinuousBackupsCommand).callsFake(({ TableName }) => ({
  ContinuousBackupsDescription: {
    ContinuousBackupsStatus: 'ENABLED',
    PointInTimeRecoveryDescription: { PointInTimeRecoveryStatus: pitrOff.has(TableName) ? 'DISABLED' : 'ENABLED' },
  },
}));
afterAll(() => answers.restore());

/** Production's config with table names of this test's own, so tests share DynamoDB Local without meeting. */
const stageWithOwnTables = (ordersStatusIndex = false): StageConfig => {
  const suffix = randomUUID().slice(0, 8);
  return {
    ...stages.production,
    ordersTableName: `preflight-${suffix}-orders`,
    apiKeysTableName: `preflight-${suffix}-api-keys`,
    ordersStatusIndex,
    statusFilterChecks: false,
  };
};

const templateOf = (config: StageConfig, { firstDeploy = false } = {}): CfnTemplate => {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new StoreOrdersStack(app, config.stackName, { config, firstDeploy })).toJSON() as CfnTemplate;
};

/** The stack as ListStackResources would describe it, holding the tables named. */
const stackHolding = (template: CfnTemplate, ...tableNames: string[]): Map<string, DeployedResource> =>
  new Map(
    Object.entries(template.Resources ?? {})
      .filter(([, resource]) => tableNames.includes(resource.Properties?.TableName as string))
      .map(([logicalId, resource]) => [logicalId, { type: resource.Type, physicalId: resource.Properties!.TableName as string }]),
  );

/** A table as the stack declares it (protected, encrypted with a KMS key, PITR on), or as `input` changes it. */
const createTable = async (name: string, input: Partial<CreateTableCommandInput> = {}, { pitr = true } = {}) => {
  const table: CreateTableCommandInput = {
    TableName: name,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'N' }],
    KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    DeletionProtectionEnabled: true,
    SSESpecification: { Enabled: true, SSEType: 'KMS' },
    ...input,
  };
  await dynamoDb.send(new CreateTableCommand(table));
  if (table.SSESpecification?.Enabled) kmsEncrypted.add(name);
  if (!pitr) pitrOff.add(name);
  await waitUntilTableExists({ client: dynamoDb, maxWaitTime: 30 }, { TableName: name });
};

/** The store's own table, as other systems often create it: no protection, DynamoDB's default encryption, no PITR. */
const asTheStoreMadeIt = { DeletionProtectionEnabled: false, SSESpecification: { Enabled: false } } as const;

const resultFor = async (
  config: StageConfig,
  template: CfnTemplate,
  deployed: Map<string, DeployedResource> | undefined,
  recorded: CfnTemplate | undefined = deployed === undefined ? undefined : template,
) => {
  const results = await checkTables(preflightDynamoDb, config, template, deployed, recorded);
  expect(results.map(({ check }) => check)).toEqual([`table ${config.ordersTableName}`, `table ${config.apiKeysTableName}`]);
  return results[0]!;
};

describe('the preflight table checks, against DynamoDB Local', () => {
  it('passes the tables a stack create makes, as -c firstDeploy=true builds it: unprotected, so a failed create can remove them', async () => {
    const config = stageWithOwnTables();
    const results = await checkTables(preflightDynamoDb, config, templateOf(config, { firstDeploy: true }), undefined);
    expect(results.every(({ ok }) => ok)).toBe(true);
    expect(results[0]!.message).toContain("the stack's create makes it, unprotected");
  });

  it('refuses a stack create that would make protected tables (production built as an ordinary deploy), naming firstDeploy', async () => {
    const config = stageWithOwnTables();
    const results = await checkTables(preflightDynamoDb, config, templateOf(config), undefined);
    expect(results.map(({ ok }) => ok)).toEqual([false, false]);
    expect(results[0]!.fix).toContain('-c firstDeploy=true');
    // Once the stack exists (it holds an adopted table), the deploy that creates the other table protects it: that is no create.
    const template = templateOf(config);
    await createTable(config.ordersTableName);
    const [, apiKeys] = await checkTables(preflightDynamoDb, config, template, stackHolding(template, config.ordersTableName));
    expect(apiKeys).toMatchObject({ ok: true, message: `${config.apiKeysTableName} does not exist yet: this deploy creates it` });
  });

  it('refuses a table outside the stack that matches what the stack declares, with the cdk import steps', async () => {
    const config = stageWithOwnTables();
    await createTable(config.ordersTableName);
    const result = await resultFor(config, templateOf(config), undefined);
    expect(result).toMatchObject({
      ok: false,
      message: expect.stringContaining(`${config.ordersTableName} exists outside StoreOrders-production`),
    });
    expect(result.message).toContain('id (N, HASH), PAY_PER_REQUEST, stream off');
    expect(result.fix).toContain(
      `npm run import-mapping -- --stage production --table ${config.ordersTableName} --out import-production.json && npx cdk import StoreOrders-production --resource-mapping import-production.json`,
    );
  });

  it('refuses to adopt a table without protection, a KMS key or PITR, or with a TTL, printing the commands that fix each', async () => {
    const config = stageWithOwnTables();
    const table = config.ordersTableName;
    await createTable(table, asTheStoreMadeIt, { pitr: false });
    await dynamoDb.send(
      new UpdateTimeToLiveCommand({ TableName: table, TimeToLiveSpecification: { Enabled: true, AttributeName: 'purgeAt' } }),
    );
    const result = await resultFor(config, templateOf(config), undefined);
    expect(result.ok).toBe(false);
    expect(result.message).toContain(`${table} exists outside StoreOrders-production and is not adoptable as it is`);
    for (const difference of [
      'deletion protection: the stack declares on, the table has off',
      'encryption: the stack declares a KMS key, the table has an AWS owned key',
      'point-in-time recovery: the stack declares on, the table has off',
      'time to live: the stack declares off, the table has on (attribute purgeAt)',
    ])
      expect(result.message).toContain(difference);
    for (const command of [
      `aws dynamodb update-table --table-name ${table} --deletion-protection-enabled`,
      `aws dynamodb update-table --table-name ${table} --sse-specification Enabled=true,SSEType=KMS`,
      `aws dynamodb update-continuous-backups --table-name ${table} --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true`,
      `aws dynamodb update-time-to-live --table-name ${table} --time-to-live-specification Enabled=false,AttributeName=purgeAt`,
    ])
      expect(result.fix).toContain(command);
    expect(result.fix).not.toContain('npx cdk import');
  });

  it('fails for a table the stack holds whose protection or PITR is off although its last template has them (an import, or a hand)', async () => {
    const config = stageWithOwnTables();
    const table = config.ordersTableName;
    await createTable(table, { DeletionProtectionEnabled: false }, { pitr: false });
    const template = templateOf(config);
    const result = await resultFor(config, template, stackHolding(template, table), template);
    expect(result).toMatchObject({ ok: false, message: expect.stringContaining('this deploy would not change it') });
    expect(result.message).toContain('deletion protection: the stack declares on, the table has off');
    expect(result.message).toContain('point-in-time recovery: the stack declares on, the table has off');
    expect(result.fix).toBe(
      `aws dynamodb update-table --table-name ${table} --deletion-protection-enabled && aws dynamodb update-continuous-backups --table-name ${table} --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true; then run the preflight again`,
    );
  });

  it('passes the deploy after a first deploy, which protects the tables, and refuses a firstDeploy build of a stack that exists', async () => {
    const config = stageWithOwnTables();
    const table = config.ordersTableName;
    await createTable(table, { DeletionProtectionEnabled: false });
    const first = templateOf(config, { firstDeploy: true });
    const next = templateOf(config);
    expect(await resultFor(config, next, stackHolding(next, table), first)).toMatchObject({
      ok: true,
      message: `${table} is the stack's, keeps its key and its 0 index(es); this deploy turns its deletion protection on`,
    });
    // The protecting deploy never ran: the stack created with -c firstDeploy=true is deployed so again.
    expect(await resultFor(config, first, stackHolding(first, table), first)).toMatchObject({
      ok: false,
      message: expect.stringContaining(`this template turns deletion protection of ${table} off, while production protects its tables`),
      fix: 'deploy without -c firstDeploy (npm run preflight -- --stage production)',
    });
  });

  it('refuses to adopt a table whose key, billing, stream or indexes differ, naming each difference', async () => {
    const config = stageWithOwnTables();
    await createTable(config.ordersTableName, {
      BillingMode: 'PROVISIONED',
      ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 5 },
      AttributeDefinitions: [
        { AttributeName: 'id', AttributeType: 'S' },
        { AttributeName: 'customer', AttributeType: 'S' },
      ],
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      // An index of the store's other systems, which the stack does not declare.
      GlobalSecondaryIndexes: [
        {
          IndexName: 'by-customer',
          KeySchema: [{ AttributeName: 'customer', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'KEYS_ONLY' },
          ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 5 },
        },
      ],
    });
    const result = await resultFor(config, templateOf(config), undefined);
    expect(result.ok).toBe(false);
    expect(result.message).toContain('key: the stack declares id (N, HASH), the table has id (S, HASH)');
    expect(result.message).toContain('billing: the stack declares PAY_PER_REQUEST, the table has PROVISIONED');
    expect(result.message).toContain('stream: the stack declares off, the table has NEW_AND_OLD_IMAGES');
    expect(result.message).toContain('global secondary indexes: the stack declares none, the table has by-customer');
    expect(result.fix).not.toContain('cdk import');
  });

  it('refuses a template that would drop an index the live table has, naming its status', async () => {
    const config = stageWithOwnTables(false);
    await createTable(config.ordersTableName);
    // Added to the live table as the index deploy adds it: an UpdateTable, then a backfill.
    const client = dynamoDb as unknown as Parameters<typeof ensureStatusIndex>[0];
    await ensureStatusIndex(client, config.ordersTableName);
    const template = templateOf(config);
    const result = await resultFor(config, template, stackHolding(template, config.ordersTableName));
    expect(result).toMatchObject({
      ok: false,
      message: expect.stringMatching(
        new RegExp(
          `^this template removes status-index \\((ACTIVE|CREATING)[^)]*\\) from ${config.ordersTableName}: CloudFormation would delete the index`,
        ),
      ),
      fix: expect.stringContaining('revert the change on main instead of deploying an older release'),
    });
    // The same table with the index in the template: kept, nothing to say.
    const withIndex = templateOf({ ...config, ordersStatusIndex: true });
    expect(await resultFor(config, withIndex, stackHolding(withIndex, config.ordersTableName))).toMatchObject({
      ok: true,
      message: `${config.ordersTableName} is the stack's, keeps its key and its 1 index(es)`,
    });
  });

  it('passes a template that adds the index to the stack’s table, saying to deploy it alone', async () => {
    const config = stageWithOwnTables(true);
    await createTable(config.ordersTableName);
    const template = templateOf(config);
    expect(await resultFor(config, template, stackHolding(template, config.ordersTableName))).toMatchObject({
      ok: true,
      message: expect.stringContaining('this deploy adds status-index (a backfill: deploy it alone'),
    });
  });

  it('fails when a table the stack holds is gone from DynamoDB', async () => {
    const config = stageWithOwnTables();
    await createTable(config.ordersTableName, { DeletionProtectionEnabled: false });
    await dynamoDb.send(new DeleteTableCommand({ TableName: config.ordersTableName }));
    const template = templateOf(config);
    expect(await resultFor(config, template, stackHolding(template, config.ordersTableName))).toMatchObject({
      ok: false,
      message: expect.stringContaining('deleted outside CloudFormation'),
    });
  });
});
