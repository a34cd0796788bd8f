import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { type LocalApiOptions, startLocalApi } from '../infra/local/local-api.ts';
import { putOrders } from '../infra/local/seed.ts';
import { apiKeysTableKey, ensureTable, ordersTableKey } from '../infra/local/tables.ts';
import { createApiKey } from '../shared/api-keys.ts';
import { createDocumentClient, type TableRef } from '../shared/dynamo.ts';
import type { Order } from '../shared/schemas.ts';

export const dynamoDbEndpoint = () => inject('dynamoDbEndpoint');

/** Fresh, uniquely named orders and api-keys tables in the run's DynamoDB Local. */
export const createTestTables = async (orders: readonly Order[] = []) => {
  const client = createDocumentClient({ endpoint: dynamoDbEndpoint() });
  const suffix = randomUUID().slice(0, 8);
  const ordersTable: TableRef = { client, tableName: `orders-${suffix}` };
  const apiKeysTable: TableRef = { client, tableName: `api-keys-${suffix}` };
  await ensureTable(client, ordersTable.tableName, ordersTableKey);
  await ensureTable(client, apiKeysTable.tableName, apiKeysTableKey);
  await putOrders(ordersTable, orders);
  return { client, orders: ordersTable, apiKeys: apiKeysTable };
};

/**
 * The local service exactly as `npm start` assembles it (real handlers, real authorizer,
 * the local gateway), over fresh tables holding `orders`, with one valid key.
 */
export const startTestApi = async (
  orders: readonly Order[],
  options: Partial<Pick<LocalApiOptions, 'authorizerCacheTtlSeconds' | 'routes' | 'documents'>> = {},
) => {
  const tables = await createTestTables(orders);
  const { key } = await createApiKey(tables.apiKeys, { name: 'test', prefix: 'so_test_' });
  const gateway = await startLocalApi({
    port: 0,
    dynamoDbEndpoint: dynamoDbEndpoint(),
    ordersTable: tables.orders.tableName,
    apiKeysTable: tables.apiKeys.tableName,
    ...options,
  });
  return { ...tables, url: gateway.url, key, auth: { Authorization: `Bearer ${key}` }, close: gateway.close };
};

/** A single-field order, for tests that only care about id and status. */
export const order = (id: string, status: string | undefined, extra: Partial<Order> = {}): Order => ({
  id,
  ...(status === undefined ? {} : { status }),
  ...extra,
});

export type ApiResponse = { status: number; headers: Headers; text: string; body: unknown };

/**
 * Every HTTP test goes through here, so every response the local gateway gives can be
 * checked in one place (status, headers, body).
 */
export const request = async (
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<ApiResponse> => {
  const response = await fetch(`${baseUrl}${path}`, { method, headers });
  const text = await response.text();
  const isJson = response.headers.get('content-type')?.startsWith('application/json') ?? false;
  return { status: response.status, headers: response.headers, text, body: isJson && text !== '' ? JSON.parse(text) : undefined };
};
