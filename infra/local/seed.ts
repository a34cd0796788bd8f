import { readFile } from 'node:fs/promises';
import { BatchWriteCommand, type BatchWriteCommandOutput, NumberValue } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../../shared/dynamo.ts';
import * as z from '../../shared/zod.ts';
import { inInt32Range, inInt64Range, type Order, orderSchema } from '../../shared/schemas.ts';

/**
 * One entry of a SEED_FILE. The file is parsed with integers kept as bigint (see
 * readSeedFile below), so a quoted id is a type error, not silently accepted.
 */
const seedInt64 = z.bigint({ error: 'expected an integer' }).check(z.refine(inInt64Range, 'outside the int64 range'));
const seedOrderSchema = z.pipe(
  z.strictObject({
    id: seedInt64,
    petId: z.optional(seedInt64),
    quantity: z.optional(z.bigint({ error: 'expected an integer' }).check(z.refine(inInt32Range, 'outside the int32 range'))),
    shipDate: orderSchema.shape.shipDate,
    complete: orderSchema.shape.complete,
    status: orderSchema.shape.status,
  }),
  z.transform(({ id, petId, quantity, ...rest }): Order => ({
    id: id.toString(),
    ...(petId === undefined ? {} : { petId: petId.toString() }),
    ...(quantity === undefined ? {} : { quantity: quantity.toString() }),
    ...rest,
  })),
);

/** The orders a fresh local run starts with: every status, and ids at the edges of int64. */
export const demoOrders: Order[] = [
  { id: '1', petId: '101', quantity: '1', shipDate: '2026-12-01T10:00:00Z', complete: false, status: 'pending' },
  { id: '2', petId: '102', quantity: '3', shipDate: '2026-11-02T09:30:00Z', complete: true, status: 'shipped' },
  { id: '3', petId: '103', quantity: '2', shipDate: '2026-12-05T15:00:00Z', complete: false, status: 'pending' },
  { id: '4', petId: '104', quantity: '1', shipDate: '2026-11-20T08:00:00Z', complete: false, status: 'cancelled' },
  { id: '5', petId: '105', quantity: '5', complete: false, status: 'placed' },
  {
    id: '9007199254740993',
    petId: '9007199254740993',
    quantity: '1',
    shipDate: '2027-01-15T12:00:00+01:00',
    complete: false,
    status: 'pending',
  },
  {
    id: '9223372036854775807',
    petId: '9223372036854775806',
    quantity: '2',
    shipDate: '2027-02-01T00:00:00Z',
    complete: false,
    status: 'pending',
  },
];

/**
 * Reads a SEED_FILE: a JSON array of orders (Order fields plus `status`). Integers are read
 * from their source text, so int64 ids keep every digit. Throws a message naming the file
 * and the first bad entry.
 */
export const readSeedFile = async (path: string): Promise<Order[]> => {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`SEED_FILE ${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
  }
  return parseSeed(text, path);
};

export const parseSeed = (text: string, source: string): Order[] => {
  let entries: unknown;
  try {
    // The reviver's third argument (Node 22+) holds each number's source text.
    const reviver = (_key: string, value: unknown, context?: { source?: string }) =>
      typeof value === 'number' && context?.source !== undefined && /^-?\d+$/.test(context.source) ? BigInt(context.source) : value;
    entries = JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
  } catch (error) {
    throw new Error(`SEED_FILE ${source}: not valid JSON (${(error as Error).message})`, { cause: error });
  }
  if (!Array.isArray(entries)) throw new Error(`SEED_FILE ${source}: must be a JSON array of orders`);
  const seen = new Map<string, number>();
  return entries.map((entry, index) => {
    const parsed = seedOrderSchema.safeParse(entry);
    const label = `entry ${index}${typeof entry === 'object' && entry !== null && 'id' in entry ? ` (id ${String(entry.id)})` : ''}`;
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) =>
        issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message,
      );
      throw new Error(`SEED_FILE ${source}: ${label}: ${problems.join('; ')}`);
    }
    const earlier = seen.get(parsed.data.id);
    if (earlier !== undefined) throw new Error(`SEED_FILE ${source}: ${label} repeats the id of entry ${earlier}`);
    seen.set(parsed.data.id, index);
    return parsed.data;
  });
};

const toItem = (order: Order) => ({
  ...order,
  id: NumberValue.from(order.id),
  ...(order.petId === undefined ? {} : { petId: NumberValue.from(order.petId) }),
  ...(order.quantity === undefined ? {} : { quantity: NumberValue.from(order.quantity) }),
});

/** Writes orders 25 at a time (BatchWrite's limit), retrying what DynamoDB leaves unprocessed. */
export const putOrders = async (table: TableRef, orders: readonly Order[], concurrency = 8): Promise<void> => {
  const batches: Order[][] = [];
  for (let i = 0; i < orders.length; i += 25) batches.push(orders.slice(i, i + 25));
  const writeBatch = async (batch: Order[]) => {
    let requests: Record<string, unknown>[] | undefined = batch.map((order) => ({ PutRequest: { Item: toItem(order) } }));
    for (let attempt = 0; requests !== undefined && requests.length > 0; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 50 * 2 ** attempt)));
      const result: BatchWriteCommandOutput = await table.client.send(
        new BatchWriteCommand({ RequestItems: { [table.tableName]: requests } }),
      );
      requests = result.UnprocessedItems?.[table.tableName];
    }
  };
  for (let i = 0; i < batches.length; i += concurrency) await Promise.all(batches.slice(i, i + concurrency).map(writeBatch));
};
