import { describe, expect, it } from 'vitest';
import { apiKeysTableKey, ordersTableKey } from '../../infra/local/tables.ts';
import { stages } from '../../infra/stage-config.ts';
import { stageNames, synthApp } from './support.ts';

const { template } = synthApp();

describe.each(stageNames)('the %s tables', (stage) => {
  const config = stages[stage];
  const t = template(stage);
  const tables = [
    { name: config.ordersTableName, key: ordersTableKey },
    { name: config.apiKeysTableName, key: apiKeysTableKey },
  ];

  it('are the orders table (id N) and the API-keys table (keyHash S), with the fixed names of the stage', () => {
    t.resourceCountIs('AWS::DynamoDB::Table', 2);
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: config.ordersTableName,
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'N' }],
    });
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: config.apiKeysTableName,
      KeySchema: [{ AttributeName: 'keyHash', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'keyHash', AttributeType: 'S' }],
    });
  });

  it.each(tables)('$name has the key schema of the local tables (infra/local/tables.ts)', ({ name, key }) => {
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: name,
      KeySchema: key.KeySchema,
      AttributeDefinitions: key.AttributeDefinitions,
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

  it('never deletes a table, on stack deletion or replacement', () => {
    for (const table of Object.values(t.findResources('AWS::DynamoDB::Table'))) {
      expect(['Retain', 'RetainExceptOnCreate']).toContain(table.DeletionPolicy);
      expect(table.UpdateReplacePolicy).toBe('Retain');
    }
  });
});

describe('the production tables', () => {
  const t = template('production');

  it.each([stages.production.ordersTableName, stages.production.apiKeysTableName])(
    '%s is retained, deletion-protected and point-in-time recoverable',
    (name) => {
      t.hasResource('AWS::DynamoDB::Table', {
        Properties: {
          TableName: name,
          DeletionProtectionEnabled: true,
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        },
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
    },
  );
});

describe('the staging tables', () => {
  const t = template('staging');

  it('follow the staging configuration: kept on teardown, removed only when their first deploy fails', () => {
    expect(stages.staging.data.removalPolicy).toBe('retain-except-on-create');
    for (const name of [stages.staging.ordersTableName, stages.staging.apiKeysTableName]) {
      t.hasResource('AWS::DynamoDB::Table', {
        Properties: { TableName: name, DeletionProtectionEnabled: false },
        DeletionPolicy: 'RetainExceptOnCreate',
        UpdateReplacePolicy: 'Retain',
      });
    }
  });
});
