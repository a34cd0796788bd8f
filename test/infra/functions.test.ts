import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { stages } from '../../infra/stage-config.ts';
import type { StoreFunction } from '../../infra/cdk/store-function.ts';
import { logicalId, roleActions, stageNames, sharedApp } from '../lib/cdk.ts';

const { stack, template } = sharedApp();

describe.each(stageNames)('the %s functions', (stage) => {
  const config = stages[stage];
  const t = template(stage);
  const s = stack(stage);
  const fn = (id: string) => s.node.findChild(id) as StoreFunction;
  const functionProperties = (id: string) => t.toJSON().Resources[logicalId(s, fn(id).function)].Properties;
  const ids = ['ListOrdersFunction', 'CancelOrderFunction', 'AuthorizerFunction'];
  const ordersTable = logicalId(s, s.ordersTable);
  const apiKeysTable = logicalId(s, s.apiKeysTable);
  const listLeasesTable = logicalId(s, s.listLeasesTable);

  it('are four: one per route and the authorizer (and, beside them, the pre-traffic hook)', () => {
    t.resourceCountIs('AWS::Lambda::Function', 5);
    expect(t.toJSON().Resources[logicalId(s, s.preTrafficHook.function)].Type).toBe('AWS::Lambda::Function');
  });

  it.each(ids)('%s runs Node.js 24 on arm64 with X-Ray tracing, source maps and Powertools settings', (id) => {
    expect(functionProperties(id)).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      TracingConfig: { Mode: 'Active' },
      Environment: {
        Variables: {
          NODE_OPTIONS: '--enable-source-maps',
          POWERTOOLS_SERVICE_NAME: `store-orders-${config.stage}`,
          POWERTOOLS_LOG_LEVEL: config.logLevel,
        },
      },
    });
  });

  it.each(ids)('%s logs to a log group of its own with the stage retention', (id) => {
    const logGroup = logicalId(s, fn(id).logGroup);
    expect(functionProperties(id).LoggingConfig).toMatchObject({ LogGroup: { Ref: logGroup } });
    t.hasResource('AWS::Logs::LogGroup', {
      Properties: { RetentionInDays: config.logRetentionDays },
      // Kept, where the stage keeps its logs, except when the deploy that created them fails.
      DeletionPolicy: config.logRemovalPolicy === 'retain' ? 'RetainExceptOnCreate' : 'Delete',
    });
  });

  it("keep Lambda's START, END and REPORT lines but out of the authorizer's log, which every made-up key reaches, dropping none of its own lines", () => {
    expect(functionProperties('AuthorizerFunction').LoggingConfig).toMatchObject({
      LogFormat: 'JSON',
      SystemLogLevel: 'WARN',
      // The stage's level: Lambda drops nothing Powertools writes, and an EMF line (no level) counts as INFO.
      ApplicationLogLevel: config.logLevel,
    });
    for (const id of ['ListOrdersFunction', 'CancelOrderFunction'])
      expect(Object.keys(functionProperties(id).LoggingConfig)).toEqual(['LogGroup']);
  });

  it('give each function only the environment it reads', () => {
    expect(functionProperties('ListOrdersFunction').Environment.Variables).toMatchObject({
      ORDERS_TABLE: { Ref: ordersTable },
      SCAN_SEGMENTS: String(config.scanSegments),
      LIST_LEASES_TABLE: { Ref: listLeasesTable },
      LIST_STALL_SECONDS: String(config.listStallSeconds),
      LIST_CONCURRENT_PER_KEY: `standard=${config.tiers.standard.concurrentLists},high=${config.tiers.high.concurrentLists},canary=${config.tiers.canary.concurrentLists},*=${config.tiers[config.defaultTier].concurrentLists}`,
    });
    expect(functionProperties('CancelOrderFunction').Environment.Variables).toMatchObject({ ORDERS_TABLE: { Ref: ordersTable } });
    expect(functionProperties('AuthorizerFunction').Environment.Variables).toMatchObject({
      API_KEYS_TABLE: { Ref: apiKeysTable },
      // Keys of the stage's form only: any other token is refused without a lookup.
      API_KEY_PREFIX: config.keyPrefix,
    });
    expect(functionProperties('CancelOrderFunction').Environment.Variables).not.toHaveProperty('API_KEYS_TABLE');
    expect(functionProperties('AuthorizerFunction').Environment.Variables).not.toHaveProperty('ORDERS_TABLE');
    for (const id of ids) expect(functionProperties(id).Environment.Variables).not.toHaveProperty('DYNAMODB_ENDPOINT');
  });

  it('give the streaming list more memory and time than cancel and the authorizer', () => {
    const list = functionProperties('ListOrdersFunction');
    const cancel = functionProperties('CancelOrderFunction');
    const authorizer = functionProperties('AuthorizerFunction');
    expect(list).toMatchObject({ MemorySize: 1024, Timeout: 900 });
    expect(cancel).toMatchObject({ MemorySize: 512, Timeout: 10 });
    expect(authorizer).toMatchObject({ MemorySize: 512, Timeout: 10 });
    // cancel must end (with a 503 if need be) before API Gateway's 29 s integration timeout.
    expect(cancel.Timeout).toBeLessThan(29);
  });

  describe('least privilege', () => {
    const roleOf = (id: string) => logicalId(s, fn(id).role);
    const xrayAndLogs = ['logs:CreateLogStream', 'logs:PutLogEvents', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'];

    it('lets listOrders only Scan the orders table and read its item count, and put and delete list leases', () => {
      expect(roleActions(t, roleOf('ListOrdersFunction'))).toEqual(
        [...xrayAndLogs, 'dynamodb:DescribeTable', 'dynamodb:Scan', 'dynamodb:PutItem', 'dynamodb:DeleteItem'].sort(),
      );
      t.hasResourceProperties('AWS::IAM::Policy', {
        Roles: [{ Ref: roleOf('ListOrdersFunction') }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            { Action: ['dynamodb:DescribeTable', 'dynamodb:Scan'], Effect: 'Allow', Resource: { 'Fn::GetAtt': [ordersTable, 'Arn'] } },
          ]),
        },
      });
      t.hasResourceProperties('AWS::IAM::Policy', {
        Roles: [{ Ref: roleOf('ListOrdersFunction') }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            {
              Action: Match.arrayEquals(['dynamodb:DeleteItem', 'dynamodb:PutItem']),
              Effect: 'Allow',
              Resource: { 'Fn::GetAtt': [listLeasesTable, 'Arn'] },
            },
          ]),
        },
      });
    });

    it('lets cancelOrder only UpdateItem the orders table', () => {
      expect(roleActions(t, roleOf('CancelOrderFunction'))).toEqual([...xrayAndLogs, 'dynamodb:UpdateItem'].sort());
      t.hasResourceProperties('AWS::IAM::Policy', {
        Roles: [{ Ref: roleOf('CancelOrderFunction') }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            { Action: 'dynamodb:UpdateItem', Effect: 'Allow', Resource: { 'Fn::GetAtt': [ordersTable, 'Arn'] } },
          ]),
        },
      });
    });

    it('lets the authorizer only GetItem the API-keys table', () => {
      expect(roleActions(t, roleOf('AuthorizerFunction'))).toEqual([...xrayAndLogs, 'dynamodb:GetItem'].sort());
      t.hasResourceProperties('AWS::IAM::Policy', {
        Roles: [{ Ref: roleOf('AuthorizerFunction') }],
        PolicyDocument: {
          Statement: Match.arrayWith([{ Action: 'dynamodb:GetItem', Effect: 'Allow', Resource: { 'Fn::GetAtt': [apiKeysTable, 'Arn'] } }]),
        },
      });
    });

    it.each(ids)('%s writes only to its own log group and has no managed policy', (id) => {
      t.hasResourceProperties('AWS::IAM::Policy', {
        Roles: [{ Ref: roleOf(id) }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            {
              Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
              Effect: 'Allow',
              Resource: { 'Fn::GetAtt': [logicalId(s, fn(id).logGroup), 'Arn'] },
            },
          ]),
        },
      });
      const role = t.toJSON().Resources[roleOf(id)];
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    });
  });
});
