import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { listLeaseAttributes } from '../../functions/list-orders/list-leases.ts';
import type { StageConfig } from '../stage-config.ts';
import { addStatusIndex } from './stage-status-index.ts';

// A stage's data: its tables, built in the stack's own scope so their construct ids (and logical
// ids) are the stack's.

/** How the stack is being deployed, where that changes the tables. */
export type TableDeploy = {
  /**
   * The stage's first deploy (`cdk deploy -c firstDeploy=true`): its tables are created without
   * deletion protection, so that a create that fails and rolls back can delete them, as
   * RetainExceptOnCreate asks; DynamoDB refuses to delete a protected table, whoever asks. The
   * next deploy turns protection on where the stage config has it (docs/deploying.md).
   */
  readonly firstDeploy?: boolean;
};

/**
 * Orders and API keys. Orders items are written by the store's other systems too: the key schema
 * is a contract. Both are kept when the stack is deleted or a change would replace them
 * (DeletionPolicy RetainExceptOnCreate, UpdateReplacePolicy Retain), and removed only when the
 * deploy that created them fails, so that its retry does not meet their fixed names.
 */
export const addTables = (
  scope: Construct,
  config: StageConfig,
  { firstDeploy = false }: TableDeploy = {},
): [dynamodb.Table, dynamodb.Table] => {
  const { data, ordersTableName, apiKeysTableName } = config;
  const tableDefaults = {
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: data.deletionProtection && !firstDeploy,
    removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
  };
  const orders = new dynamodb.Table(scope, 'OrdersTable', {
    ...tableDefaults,
    tableName: ordersTableName,
    partitionKey: { name: 'id', type: dynamodb.AttributeType.NUMBER },
  });
  addStatusIndex(orders, config);
  return [
    orders,
    new dynamodb.Table(scope, 'ApiKeysTable', {
      ...tableDefaults,
      tableName: apiKeysTableName,
      partitionKey: { name: 'keyHash', type: dynamodb.AttributeType.STRING },
    }),
  ];
};

/**
 * One item per running list (functions/list-orders/list-leases.ts): nothing to keep, so no fixed name and no
 * retention; expired leases are removed by DynamoDB's TTL. Point-in-time recovery as on every
 * table (Control Tower CT.DYNAMODB.PR.1): for a table of a few small items it costs nothing.
 */
export const addListLeasesTable = (scope: Construct): dynamodb.Table => {
  return new dynamodb.Table(scope, 'ListLeasesTable', {
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    partitionKey: { name: listLeaseAttributes.key, type: dynamodb.AttributeType.STRING },
    timeToLiveAttribute: listLeaseAttributes.expiresAt,
    removalPolicy: RemovalPolicy.DESTROY,
  });
};
