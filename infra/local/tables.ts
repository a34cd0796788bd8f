import { CreateTableCommand, type CreateTableCommandInput, ResourceInUseException, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import type { DocumentClient } from '../../shared/dynamo.ts';

/** The key schemas the deployed tables have (infra/cdk/store-orders-stack.ts), for local and test tables. */
type TableKey = Pick<CreateTableCommandInput, 'AttributeDefinitions' | 'KeySchema'>;
export const ordersTableKey: TableKey = {
  AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'N' }],
  KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
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
