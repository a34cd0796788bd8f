/**
 * The local API in this process on a DynamoDB client mocked with aws-sdk-client-mock, for faults
 * DynamoDB Local cannot produce on demand. `mockedDynamoDbApi` registers the file's hooks: the API
 * starts once (one Scan segment, so the page order is known: the first page streams, the second
 * fails), and before each test the mock is reset to a store that knows `key` and counts two orders.
 */
import { CreateTableCommand, DescribeTableCommand, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { Gateway } from '../../infra/local/gateway.ts';
import { startLocalApi } from '../../infra/local/local-api.ts';
import { type FunctionStage, localStage } from '../../infra/stage-config.ts';
import { hashApiKey, keyIdOf } from '../../functions/authorizer/api-keys.ts';

export const mockedDynamoDbApi = (key: string, stage: Partial<FunctionStage> = {}) => {
  const dynamo = mockClient(DynamoDBDocumentClient);
  let api: Gateway | undefined;
  beforeEach(() => {
    const keyHash = hashApiKey(key);
    dynamo.reset();
    // The developer's key, as npm start registers it: a usage identifier (else 401 INVALID_API_KEY), no limits.
    const item = {
      keyHash,
      keyId: keyIdOf(keyHash),
      name: 'test',
      createdAt: '2026-01-01T00:00:00Z',
      tier: 'unlimited',
      usageKey: 'c3'.repeat(32),
    };
    dynamo.on(GetCommand).resolves({ Item: item });
    // The list first reads the table's item count (it refuses a store too large for one answer).
    dynamo.on(DescribeTableCommand).resolves({ Table: { ItemCount: 2 } });
  });
  beforeAll(async () => {
    // The list-leases table exists (the local API creates it when missing); leases are taken and given back as PutItem/DeleteItem.
    dynamo.on(CreateTableCommand).rejects(new ResourceInUseException({ message: 'exists', $metadata: {} }));
    api = await startLocalApi({
      port: 0,
      dynamoDbEndpoint: 'http://127.0.0.1:9',
      ordersTable: 'orders',
      apiKeysTable: 'api-keys',
      listLeasesTable: 'list-leases',
      stage: { ...localStage, scanSegments: 1, ...stage },
    });
  });
  afterAll(async () => {
    await api?.close();
    dynamo.restore();
  });
  return {
    dynamo,
    /** The API's base URL (`…/v1`), once the file's `beforeAll` has run. */
    url: (): string => {
      if (api === undefined) throw new Error('the mocked API starts in beforeAll');
      return api.url;
    },
  };
};
