import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { GetCommand, NumberValue, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { request } from '../lib/local-api.ts';
import { mockedDynamoDbApi } from '../lib/mocked-dynamodb.ts';

// Scan faults DynamoDB Local cannot produce on demand, seen by a client through the local gateway.
const key = 'so_test_failure-tests-key-0000000000';
const auth = { Authorization: `Bearer ${key}` };
const { dynamo, url } = mockedDynamoDbApi(key);

describe('listing when DynamoDB fails', () => {
  it('answers 503 service_unavailable as an Error record when the first page fails', async () => {
    dynamo.on(ScanCommand).rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));
    const response = await request(url(), 'GET', '/store/orders', auth);
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
    expect(response.headers.get('retry-after')).toBe('1');
  });

  it('cuts the response short, never sending a complete-looking array, when a later page fails', async () => {
    dynamo
      .on(ScanCommand)
      .resolvesOnce({ Items: [{ id: NumberValue.from('1'), status: 'pending' }], LastEvaluatedKey: { id: NumberValue.from('1') } })
      .rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));
    const response = await fetch(`${url()}/store/orders`, { headers: auth });
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
    const response = await request(url(), 'GET', '/store/orders', { Authorization: 'Bearer so_test_never-cached-key-000000000' });
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ code: 'internal_error', message: expect.any(String), status: 500 });
    expect(response.headers.get('www-authenticate')).toBeNull();
  });
});
