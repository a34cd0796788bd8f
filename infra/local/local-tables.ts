import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTableCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import type { DocumentClient } from '../../shared/dynamo.ts';
import { statusIndex } from '../../shared/status-index.ts';

/** The key schemas the deployed tables have (infra/cdk/store-orders-stack.ts), for local and test tables. */
type TableKey = Pick<CreateTableCommandInput, 'AttributeDefinitions' | 'KeySchema' | 'GlobalSecondaryIndexes'>;

/** The orders table's status index, as the stack declares it: what a v2 list's status filter Queries. */
const statusIndexDefinition = {
  IndexName: statusIndex.name,
  KeySchema: [{ AttributeName: statusIndex.partitionKey, KeyType: 'HASH' as const }],
  Projection: { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...statusIndex.projected] },
};
export const ordersTableKey: TableKey = {
  AttributeDefinitions: [
    { AttributeName: 'id', AttributeType: 'N' },
    { AttributeName: statusIndex.partitionKey, AttributeType: 'S' },
  ],
  KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
  GlobalSecondaryIndexes: [statusIndexDefinition],
};

/** Adds the status index to an orders table made before it existed (a local data directory kept from an older version). */
export const ensureStatusIndex = async (client: DocumentClient, tableName: string): Promise<void> => {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  if (Table?.GlobalSecondaryIndexes?.some((index) => index.IndexName === statusIndex.name)) return;
  await client.send(
    new UpdateTableCommand({
      TableName: tableName,
      AttributeDefinitions: [{ AttributeName: statusIndex.partitionKey, AttributeType: 'S' }],
      GlobalSecondaryIndexUpdates: [{ Create: statusIndexDefinition }],
    }),
  );
};
export const apiKeysTableKey: TableKey = {
  AttributeDefinitions: [{ AttributeName: 'keyHash', AttributeType: 'S' }],
  KeySchema: [{ AttributeName: 'keyHash', KeyType: 'HASH' }],
};

export const listLeasesTableKey: TableKey = {
  AttributeDefinitions: [{ AttributeName: 'lease', AttributeType: 'S' }],
  KeySchema: [{ AttributeName: 'lease', KeyType: 'HASH' }],
};

/** Creates the table unless it exists. Returns true when this call created it. */
export const ensureTable = async (client: DocumentClient, tableName: string, key: TableKey): Promise<boolean> => {
  try {
    await client.send(new CreateTableCommand({ TableName: tableName, BillingMode: 'PAY_PER_REQUEST', ...key }));
  } catch (error) {
    if (error instanceof ResourceInUseException) return false;
    throw error;
  }
  await waitUntilTableExists({ client, maxWaitTime: 30 }, { TableName: tableName });
  return true;
};
