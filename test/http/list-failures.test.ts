import {
  CreateTableCommand,
  DescribeTableCommand,
  ProvisionedThroughputExceededException,
  ResourceInUseException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, NumberValue, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Gateway } from '../../infra/local/gateway.ts';
import { startLocalApi } from '../../infra/local/local-api.ts';
import { localStage } from '../../infra/stage-config.ts';
import { hashApiKey, keyIdOf } from '../../shared/api-keys.ts';
import { request } from '../lib/local-api.ts';

// Scan faults DynamoDB Local cannot produce on demand, seen by a client through the local gateway.
const dynamo = mockClient(DynamoDBDocumentClient);
const key = 'so_test_failure-tests-key-0000000000';
const auth = { Authorization: `Bearer ${key}` };
let api: Gateway;

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
    // One segment, so the page order is known: the first page streams, the second fails.
    stage: { ...localStage, scanSegments: 1 },
  });
});
afterAll(async () => {
  await api.close();
  dynamo.restore();
});

describe('listing when DynamoDB fails', () => {
  it('answers 503 service_unavailable as an Error record when the first page fails', async () => {
    dynamo.on(ScanCommand).rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));
    const response = await request(api.url, 'GET', '/store/orders', auth);
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
    expect(response.headers.get('retry-after')).toBe('1');
  });

  it('cuts the response short, never sending a complete-looking array, when a later page fails', async () => {
    dynamo
      .on(ScanCommand)
      .resolvesOnce({ Items: [{ id: NumberValue.from('1'), status: 'pending' }], LastEvaluatedKey: { id: NumberValue.from('1') } })
      .rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));
    const response = await fetch(`${api.url}/store/orders`, { headers: auth });
    expect(response.status).toBe(200);
    const outcome = await response.text().then(
      (text) => ({ text }),
      (error: unknown) => ({ error }),
    );
    // The 200 head and the first page were already sent; then the connection breaks.
    expect(outcome).toEqual({ error: expect.any(Error) });
  });
});

describe('authorizing when DynamoDB fails', () => {
  it('answers 500 internal_error (AUTHORIZER_FAILURE), not 401, so an outage does not look like a bad key', async () => {
    dynamo.on(GetCommand).rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));
    // A key no earlier test used, so no cached Allow answers for it.
    const response = await request(api.url, 'GET', '/store/orders', { Authorization: 'Bearer so_test_never-cached-key-000000000' });
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ code: 'internal_error', message: expect.any(String), status: 500 });
    expect(response.headers.get('www-authenticate')).toBeNull();
  });
});
