import { ProvisionedThroughputExceededException, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { installLambdaStreamingGlobals } from '../../infra/local/lambda-runtime.ts';

// Faults DynamoDB Local cannot produce on demand: throttling after the SDK's retries, a
// missing table, an unreachable endpoint. The handlers are invoked as Lambda would.
const context = { awsRequestId: 'test', functionName: 'test', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
const event = (orderId?: string) =>
  ({
    headers: {},
    pathParameters: orderId === undefined ? null : { orderId },
    requestContext: { requestId: 'req-123' },
  }) as unknown as APIGatewayProxyEvent;

type Result = { statusCode: number; headers: Record<string, string>; body: string };
const errorBody = (result: Result) => JSON.parse(result.body) as unknown;

describe('when DynamoDB fails', () => {
  const dynamo = mockClient(DynamoDBDocumentClient);
  let cancelHandler: (event: APIGatewayProxyEvent, context: Context) => Promise<Result>;
  let pagedHandler: (event: APIGatewayProxyEvent, context: Context) => Promise<Result>;

  beforeAll(async () => {
    vi.stubEnv('ORDERS_TABLE', 'orders');
    vi.stubEnv('API_KEYS_TABLE', 'api-keys');
    vi.stubEnv('DYNAMODB_ENDPOINT', 'http://127.0.0.1:9');
    installLambdaStreamingGlobals();
    vi.stubEnv('STAGE_NAME', 'local');
    vi.stubEnv('CURSOR_SECRETS', JSON.stringify({ current: 'test-cursor-secret-0123456789abcdef' }));
    cancelHandler = (await import('../../functions/cancel-order/handler.ts')).handler as never;
    pagedHandler = (await import('../../functions/list-orders-paged/handler.ts')).handler as never;
  });
  afterEach(() => dynamo.reset());
  afterAll(() => {
    dynamo.restore();
    vi.unstubAllEnvs();
  });

  it('answers 503 service_unavailable with Retry-After when DynamoDB throttles', async () => {
    dynamo.on(UpdateCommand).rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));
    const result = await cancelHandler(event('1'), context);
    expect(result.statusCode).toBe(503);
    expect(errorBody(result)).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
    expect(result.headers).toMatchObject({
      'Content-Type': 'application/json',
      'Retry-After': '1',
      'X-Request-Id': 'req-123',
      'Cache-Control': 'no-store',
    });
  });

  it('answers 500 internal_error without internals when the table is missing', async () => {
    dynamo
      .on(UpdateCommand)
      .rejects(new ResourceNotFoundException({ message: 'Requested resource not found: Table: orders-secret-name', $metadata: {} }));
    const result = await cancelHandler(event('1'), context);
    expect(result.statusCode).toBe(500);
    expect(errorBody(result)).toEqual({ code: 'internal_error', message: expect.any(String), status: 500 });
    expect(result.body).not.toContain('orders-secret-name');
    expect(result.headers['X-Request-Id']).toBe('req-123');
  });

  it('answers 503 when DynamoDB is unreachable (a real refused connection)', async () => {
    dynamo.restore();
    const result = await cancelHandler(event('1'), context);
    expect(result.statusCode).toBe(503);
    expect(errorBody(result)).toMatchObject({ code: 'service_unavailable' });
    mockClient(DynamoDBDocumentClient);
  });

  it('answers a v2 status filter 503 service_unavailable with Retry-After while its index is backfilling', async () => {
    // DynamoDB's answer to a Query of an index being built (docs/decisions.md#v2-list-access-paths).
    const backfilling = Object.assign(new Error('Cannot read from backfilling global secondary index: status-index'), {
      name: 'ValidationException',
      $metadata: { httpStatusCode: 400 },
    });
    dynamo.on(QueryCommand).rejects(backfilling);
    const query = { ...event(), queryStringParameters: { status: 'pending' } } as APIGatewayProxyEvent;
    const result = await pagedHandler(query, context);
    expect(result.statusCode).toBe(503);
    expect(errorBody(result)).toEqual({
      code: 'service_unavailable',
      message: 'The status filter is not available yet: retry later, or read without status.',
      status: 503,
    });
    expect(result.headers).toMatchObject({ 'Retry-After': '60', 'X-Request-Id': 'req-123' });
    expect(dynamo.commandCalls(QueryCommand)[0]!.args[0].input.IndexName).toBe('status-index');
  });

  it('answers any other ValidationException of the v2 status filter 500 internal_error (a defect, not a wait)', async () => {
    const other = Object.assign(new Error('Invalid KeyConditionExpression'), {
      name: 'ValidationException',
      $metadata: { httpStatusCode: 400 },
    });
    dynamo.on(QueryCommand).rejects(other);
    const query = { ...event(), queryStringParameters: { status: 'pending' } } as APIGatewayProxyEvent;
    const result = await pagedHandler(query, context);
    expect(result.statusCode).toBe(500);
    expect(errorBody(result)).toMatchObject({ code: 'internal_error' });
  });

  it('answers 400 before touching DynamoDB when the id is malformed', async () => {
    const result = await cancelHandler(event('12abc'), context);
    expect(result.statusCode).toBe(400);
    expect(dynamo.calls()).toHaveLength(0);
  });
});
