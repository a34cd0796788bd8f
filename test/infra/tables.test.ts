import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { apiKeysTableKey, listLeasesTableKey, ordersTableKey } from '../../infra/local/local-tables.ts';
import { stages } from '../../infra/stage-config.ts';
import { stageNames, sharedApp } from '../lib/cdk.ts';

const { template } = sharedApp();

describe.each(stageNames)('the %s tables', (stage) => {
  const config = stages[stage];
  const t = template(stage);
  const tables = [
    { name: config.ordersTableName, key: ordersTableKey },
    { name: config.apiKeysTableName, key: apiKeysTableKey },
  ];

  it('are the orders table (id N) and the API-keys table (keyHash S), with the fixed names of the stage, and the list leases', () => {
    t.resourceCountIs('AWS::DynamoDB::Table', 3);
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: config.ordersTableName,
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      AttributeDefinitions: [
        { AttributeName: 'id', AttributeType: 'N' },
        ...(config.ordersStatusIndex ? [{ AttributeName: 'status', AttributeType: 'S' }] : []),
      ],
    });
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: config.apiKeysTableName,
      KeySchema: [{ AttributeName: 'keyHash', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'keyHash', AttributeType: 'S' }],
    });
  });

  it.each(tables)('$name has the key schema of the local tables (infra/local/local-tables.ts)', ({ name, key }) => {
    t.hasResourceProperties('AWS::DynamoDB::Table', { TableName: name, KeySchema: key.KeySchema });
  });

  it('indexes orders by status (the v2 list status filter) as the local tables do, exactly when the stage config says so', () => {
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: config.ordersTableName,
      GlobalSecondaryIndexes: config.ordersStatusIndex ? ordersTableKey.GlobalSecondaryIndexes : Match.absent(),
    });
  });

  it.each(tables)('$name is on-demand, encrypted and has point-in-time recovery', ({ name }) => {
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      SSESpecification: { SSEEnabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      DeletionProtectionEnabled: config.data.deletionProtection,
    });
  });

  it('holds list leases in an on-demand, encrypted, recoverable table whose expired items DynamoDB removes (TTL on expiresAt)', () => {
    t.hasResource('AWS::DynamoDB::Table', {
      Properties: {
        KeySchema: listLeasesTableKey.KeySchema,
        AttributeDefinitions: listLeasesTableKey.AttributeDefinitions,
        BillingMode: 'PAY_PER_REQUEST',
        SSESpecification: { SSEEnabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      },
      // Leases of lists running now, nothing to keep: it goes with the stack.
      DeletionPolicy: 'Delete',
    });
  });

  // CloudFormation's DeletionPolicy attribute: RetainExceptOnCreate keeps the resource on every
  // stack operation but a rolled-back one that created it; CDK's RETAIN_ON_UPDATE_OR_DELETE writes it.
  it('never deletes a data table on stack deletion or replacement, and removes it only when the deploy that created it fails', () => {
    const dataTables = Object.values(t.findResources('AWS::DynamoDB::Table')).filter((table) =>
      [config.ordersTableName, config.apiKeysTableName].includes(table.Properties.TableName),
    );
    expect(dataTables).toHaveLength(2);
    for (const table of dataTables) {
      expect(table.DeletionPolicy).toBe('RetainExceptOnCreate');
      expect(table.UpdateReplacePolicy).toBe('Retain');
    }
  });
});

describe('the production tables', () => {
  const t = template('production');

  it.each([stages.production.ordersTableName, stages.production.apiKeysTableName])(
    '%s is retained (except when its own creation fails), deletion-protected and point-in-time recoverable',
    (name) => {
      t.hasResource('AWS::DynamoDB::Table', {
        Properties: {
          TableName: name,
          DeletionProtectionEnabled: true,
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        },
        DeletionPolicy: 'RetainExceptOnCreate',
        UpdateReplacePolicy: 'Retain',
      });
    },
  );
});

describe('the staging tables', () => {
  const t = template('staging');

  it('follow the staging configuration: kept on teardown, removed only when their first deploy fails, unprotected', () => {
    expect(stages.staging.data.deletionProtection).toBe(false);
    for (const name of [stages.staging.ordersTableName, stages.staging.apiKeysTableName]) {
      t.hasResource('AWS::DynamoDB::Table', {
        Properties: { TableName: name, DeletionProtectionEnabled: false },
        DeletionPolicy: 'RetainExceptOnCreate',
        UpdateReplacePolicy: 'Retain',
      });
    }
  });
});
