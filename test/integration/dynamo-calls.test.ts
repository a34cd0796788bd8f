import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { callDeadline, createDocumentClient } from '../../shared/dynamo.ts';
import { dynamoDbFields, dynamoDbRecord, listedCalls, startDynamoDbRecord } from '../../shared/dynamo-calls.ts';
import { acquireListLease } from '../../functions/list-orders/list-leases.ts';
import { cancelOrder } from '../../functions/cancel-order/cancel-update.ts';
import { createTestTables, order } from '../lib/local-api.ts';

const inAMinute = () => new Date(Date.now() + 60_000);

describe("each DynamoDB call in the request's record (the SDK middleware on every document client)", () => {
  it('records operation, table, time, attempts and consumed capacity of calls DynamoDB Local answers, and the error of one that failed', async () => {
    const { orders, listLeases } = await createTestTables([order('1', 'pending'), order('2', 'shipped')]);
    startDynamoDbRecord();
    expect((await cancelOrder(orders, '1', { deadline: callDeadline() })).outcome).toBe('cancelled');
    expect(await acquireListLease(listLeases, { keyId: 'key_a', holder: 'r1', slots: 1, expiresAt: inAMinute() })).toBeDefined();
    // The slot is held: the conditional PutItem fails, which the lease code expects.
    expect(await acquireListLease(listLeases, { keyId: 'key_a', holder: 'r2', slots: 1, expiresAt: inAMinute() })).toBeUndefined();
    const calls = dynamoDbRecord();
    expect(calls).toEqual([
      { operation: 'UpdateItem', table: orders.tableName, ms: expect.any(Number), attempts: 1, capacity: expect.any(Number), throttled: 0 },
      {
        operation: 'PutItem',
        table: listLeases.tableName,
        ms: expect.any(Number),
        attempts: 1,
        capacity: expect.any(Number),
        throttled: 0,
      },
      {
        operation: 'PutItem',
        table: listLeases.tableName,
        ms: expect.any(Number),
        attempts: 1,
        throttled: 0,
        error: 'ConditionalCheckFailedException',
      },
    ]);
    expect(calls[0]!.capacity).toBeGreaterThan(0);
    expect(dynamoDbFields()).toMatchObject({
      dynamoDbCalls: 3,
      dynamoDbThrottled: 0,
      dynamoDbSlowestMs: Math.max(...calls.map((c) => c.ms)),
    });
    // A new request starts with an empty record.
    startDynamoDbRecord();
    expect(dynamoDbRecord()).toEqual([]);
    expect(dynamoDbFields()).toEqual({});
  });

  it('lists the first calls one by one and counts them all', () => {
    const many = Array.from({ length: listedCalls + 5 }, (_, i) => ({
      operation: 'Scan',
      table: 't',
      ms: i,
      attempts: 1,
      capacity: 0.5,
      throttled: i === 3 ? 2 : 0,
    }));
    expect(dynamoDbFields(many)).toEqual({
      dynamoDb: many.slice(0, listedCalls),
      dynamoDbCalls: listedCalls + 5,
      dynamoDbMs: many.reduce((sum, call) => sum + call.ms, 0),
      dynamoDbSlowestMs: listedCalls + 4,
      dynamoDbSlowestOperation: 'Scan',
      dynamoDbThrottled: 2,
      dynamoDbCapacity: (listedCalls + 5) * 0.5,
    });
  });

  // DynamoDB Local never throttles: a server that answers as DynamoDB does when it throttles (HTTP 400 with the error's __type).
  const answers: { status: number; body: unknown }[] = [];
  const throttling = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const { status, body } = answers.shift() ?? { status: 200, body: {} };
      res.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.0' }).end(JSON.stringify(body));
    });
  });
  afterAll(() => throttling.close());

  it('counts the attempts DynamoDB throttled and the attempts the call took, throttled or not in the end', async () => {
    throttling.listen(0, '127.0.0.1');
    await once(throttling, 'listening');
    const endpoint = `http://127.0.0.1:${(throttling.address() as AddressInfo).port}`;
    const client = createDocumentClient({ endpoint });
    const throttled = {
      status: 400,
      body: { __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException', message: 'Rate exceeded' },
    };
    answers.push(throttled, throttled, {
      status: 200,
      body: { Item: { keyHash: { S: 'h' } }, ConsumedCapacity: { TableName: 'keys', CapacityUnits: 0.5 } },
    });
    startDynamoDbRecord();
    await client.send(new GetCommand({ TableName: 'keys', Key: { keyHash: 'h' } }));
    answers.push(throttled, throttled, throttled);
    await expect(client.send(new GetCommand({ TableName: 'keys', Key: { keyHash: 'h' } }))).rejects.toThrow('Rate exceeded');
    expect(dynamoDbRecord()).toEqual([
      { operation: 'GetItem', table: 'keys', ms: expect.any(Number), attempts: 3, capacity: 0.5, throttled: 2 },
      {
        operation: 'GetItem',
        table: 'keys',
        ms: expect.any(Number),
        attempts: 3,
        throttled: 3,
        error: 'ProvisionedThroughputExceededException',
      },
    ]);
  });
});
