/**
 * The client package against the local gateway and the real handlers while DynamoDB fails in
 * ways DynamoDB Local cannot on demand (aws-sdk-client-mock, as test/http/list-failures.test.ts):
 * a list cut mid-stream is reported, never a short list; 503 is retried after Retry-After; 500 is
 * not.
 */
import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { GetCommand, NumberValue, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { InternalServerError, type Order, ResponseCutError, ServiceUnavailableError, StoreOrdersClient } from '../../client/src/index.ts';
import { readAll, recordingFetch } from '../lib/client.ts';
import { mockedDynamoDbApi } from '../lib/mocked-dynamodb.ts';

const key = 'so_test_client-faults-key-0000000000';
// The authorizer cache off, so a failing authorizer is seen at once.
const { dynamo, url } = mockedDynamoDbApi(key, { authorizerCacheTtlSeconds: 0 });
const slowDown = () => new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} });

const clientWith = (fetcher?: typeof fetch) =>
  new StoreOrdersClient({ baseUrl: url(), apiKey: key, ...(fetcher ? { fetch: fetcher } : {}) });

describe('the client when the service fails', () => {
  it('reports a list cut after its first page as ResponseCutError after the orders that arrived', async () => {
    dynamo
      .on(ScanCommand)
      .resolvesOnce({
        Items: [{ id: NumberValue.from('9007199254740993'), status: 'pending' }],
        LastEvaluatedKey: { id: NumberValue.from('1') },
      })
      .rejects(slowDown());
    const seen: Order[] = [];
    const error = await (async () => {
      for await (const order of clientWith().listOrders()) seen.push(order);
    })().catch((caught: unknown) => caught);
    // The first page was sent, but fetch drops what it had not handed over when the connection
    // breaks: the client yields what reached it (here the order, or nothing) and then the error.
    expect([[], [{ id: 9007199254740993n, status: 'pending' }]]).toContainEqual(seen);
    expect(error).toBeInstanceOf(ResponseCutError);
    expect(error).toMatchObject({
      code: 'client_response_cut',
      status: 200,
      ordersRead: seen.length,
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });

  it('retries a 503 service_unavailable after its Retry-After, then lists', async () => {
    dynamo
      .on(ScanCommand)
      .rejectsOnce(slowDown())
      .resolves({ Items: [{ id: NumberValue.from('9223372036854775807') }] });
    const { statuses, fetch } = recordingFetch();
    const started = Date.now();
    expect(await readAll(clientWith(fetch).listOrders())).toEqual([{ id: 9223372036854775807n }]);
    expect(statuses).toEqual([503, 200]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('throws ServiceUnavailableError with the last answer once the attempts are spent', async () => {
    dynamo.on(UpdateCommand).rejects(slowDown());
    const { statuses, fetch } = recordingFetch();
    const error = await clientWith(fetch)
      .cancelOrder(1n, { retry: { maxAttempts: 2 } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject({ code: 'service_unavailable', status: 503, attempts: 2, retryAfterSeconds: 1 });
    expect(statuses).toEqual([503, 503]);
  });

  it('does not retry 500 internal_error (an authorizer that cannot read its table)', async () => {
    dynamo.on(GetCommand).rejects(new Error('boom'));
    const { statuses, fetch } = recordingFetch();
    await expect(clientWith(fetch).cancelOrder(1n)).rejects.toBeInstanceOf(InternalServerError);
    expect(statuses).toEqual([500]);
  });
});
