/** The bench's floors: what DynamoDB Local itself costs, through the plain SDK client. */
import { DynamoDBClient, GetItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { hashApiKey } from '../../functions/authorizer/api-keys.ts';
import { type DocumentClient } from '../../shared/dynamo.ts';
import { cancelOrder } from '../../functions/cancel-order/cancel-update.ts';

import { settings, tables } from './bench-settings.ts';

/** The plain SDK client, signing with the credentials the bench's DynamoDB Local answers to (in this process's environment, bench.ts). */
export const rawClient = (endpoint: string) =>
  new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? 'local', secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? 'local' },
  });

const projection = ['id', 'petId', 'quantity', 'shipDate', 'complete', 'status'];

/**
 * A parallel Scan of the whole table: no document client, no validation, no JSON. Same projection
 * and segments as the service. Also sums the read units DynamoDB (Local) reports for it.
 */
export const rawScan = async (client: DynamoDBClient) => {
  const started = performance.now();
  let firstPageMs: number | undefined;
  let items = 0;
  let pages = 0;
  let readUnits = 0;
  const segment = async (index: number) => {
    let startKey: Record<string, never> | undefined;
    do {
      const page = await client.send(
        new ScanCommand({
          TableName: tables.orders,
          Segment: index,
          TotalSegments: settings.segments,
          ExclusiveStartKey: startKey,
          ProjectionExpression: projection.map((_, i) => `#a${i}`).join(','),
          ExpressionAttributeNames: Object.fromEntries(projection.map((name, i) => [`#a${i}`, name])),
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      firstPageMs ??= performance.now() - started;
      readUnits += page.ConsumedCapacity?.CapacityUnits ?? 0;
      items += page.Count ?? 0;
      pages++;
      startKey = page.LastEvaluatedKey as typeof startKey;
    } while (startKey !== undefined);
  };
  await Promise.all(Array.from({ length: settings.segments }, (_, i) => segment(i)));
  if (items !== settings.orders) throw new Error(`raw Scan saw ${items} items, expected ${settings.orders}`);
  return { totalMs: performance.now() - started, firstPageMs: firstPageMs ?? 0, pages, readUnits };
};

/**
 * The cancel's own write, exactly as the cancel builds it (functions/cancel-order/cancel-update.ts's
 * cancelOrder: its key, expression, condition and ALL_OLD on failure), sent through the plain SDK
 * client instead of the document client, with ReturnConsumedCapacity added: its write units.
 */
export const rawCancel = async (client: DynamoDBClient, id: string) => {
  let writeUnits = 0;
  // The document client's part, done here: marshal the command's native values, send it as UpdateItem.
  const plain = {
    send: async (command: UpdateCommand, options?: { abortSignal?: AbortSignal }) => {
      const { Key, ExpressionAttributeValues, ...rest } = command.input;
      const output = await client.send(
        new UpdateItemCommand({
          ...rest,
          Key: marshall(Key),
          ...(ExpressionAttributeValues === undefined ? {} : { ExpressionAttributeValues: marshall(ExpressionAttributeValues) }),
          ReturnConsumedCapacity: 'TOTAL',
        }),
        options,
      );
      writeUnits = output.ConsumedCapacity?.CapacityUnits ?? 0;
      return output;
    },
  } as unknown as DocumentClient;
  const { outcome } = await cancelOrder({ client: plain, tableName: tables.orders }, id);
  if (outcome !== 'cancelled') throw new Error(`raw cancel of order ${id}: ${outcome}, expected cancelled`);
  return writeUnits;
};

/** The authorizer's own read (a GetItem of the key's hash): its read units. */
export const rawKeyRead = async (client: DynamoDBClient, key: string) => {
  const { ConsumedCapacity } = await client.send(
    new GetItemCommand({ TableName: tables.apiKeys, Key: { keyHash: { S: hashApiKey(key) } }, ReturnConsumedCapacity: 'TOTAL' }),
  );
  return ConsumedCapacity?.CapacityUnits ?? 0;
};
