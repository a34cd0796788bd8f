/** The local API for tests: fresh tables in the run's DynamoDB Local, the service started on them, and request(), which checks every answer against the OpenAPI contract. */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { type LocalApiOptions, startLocalApi } from '../../infra/local/local-api.ts';
import { putOrders } from '../../infra/local/seed.ts';
import { apiKeysTableKey, ensureTable, listLeasesTableKey, ordersTableKey } from '../../infra/local/local-tables.ts';
import { localStage } from '../../infra/stage-config.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { createDocumentClient, type TableRef } from '../../shared/dynamo.ts';
import type { OpenApiDocument } from '../../infra/openapi/document.ts';
import type { Order } from '../../shared/schemas.ts';
import { assertContract, committedOpenApiDocument } from './openapi-contract.ts';

export const dynamoDbEndpoint = () => inject('dynamoDbEndpoint');

/** Fresh, uniquely named orders and api-keys tables in the run's DynamoDB Local (or the one at `endpoint`). */
export const createTestTables = async (orders: readonly Order[] = [], endpoint: string = dynamoDbEndpoint()) => {
  const client = createDocumentClient({ endpoint });
  const suffix = randomUUID().slice(0, 8);
  const ordersTable: TableRef = { client, tableName: `orders-${suffix}` };
  const apiKeysTable: TableRef = { client, tableName: `api-keys-${suffix}` };
  const listLeasesTable: TableRef = { client, tableName: `list-leases-${suffix}` };
  await ensureTable(client, ordersTable.tableName, ordersTableKey);
  await ensureTable(client, apiKeysTable.tableName, apiKeysTableKey);
  await ensureTable(client, listLeasesTable.tableName, listLeasesTableKey);
  await putOrders(ordersTable, orders);
  return { client, orders: ordersTable, apiKeys: apiKeysTable, listLeases: listLeasesTable };
};

/**
 * The local service exactly as `npm start` assembles it (real handlers, real authorizer,
 * the local gateway), over fresh tables holding `orders`, with one valid key (the developer's, unlimited).
 */
export const startTestApi = async (
  orders: readonly Order[],
  options: Partial<
    Pick<LocalApiOptions, 'stage' | 'registry' | 'environment' | 'documents' | 'dynamoDbEndpoint' | 'limits' | 'allowedHosts'>
  > = {},
) => {
  const endpoint = options.dynamoDbEndpoint ?? dynamoDbEndpoint();
  const tables = await createTestTables(orders, endpoint);
  // The developer's key, as npm start registers it: unlimited, so no test is throttled unless it means to be.
  const { key } = await createApiKey(tables.apiKeys, { name: 'test', prefix: 'so_test_', tier: localStage.developerKeyTier });
  const gateway = await startLocalApi({
    port: 0,
    ordersTable: tables.orders.tableName,
    apiKeysTable: tables.apiKeys.tableName,
    listLeasesTable: tables.listLeases.tableName,
    ...options,
    dynamoDbEndpoint: endpoint,
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

export type RequestOptions = {
  /** The document the response is checked against (default: docs/openapi.json as committed). */
  readonly contract?: OpenApiDocument;
};

/**
 * Every HTTP test goes through here, so every response the local gateway gives is checked
 * in one place: it must be one the OpenAPI document describes for the operation that
 * `method` and `path` name (status, headers, body), or the call throws.
 */
export const request = async (
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  options: RequestOptions = {},
): Promise<ApiResponse> => {
  const url = `${baseUrl}${path}`;
  const response = await fetch(url, { method, headers });
  const text = await response.text();
  const isJson = response.headers.get('content-type')?.startsWith('application/json') ?? false;
  assertContract(options.contract ?? committedOpenApiDocument(), method, url, {
    status: response.status,
    headers: response.headers,
    text,
  });
  return { status: response.status, headers: response.headers, text, body: isJson && text !== '' ? JSON.parse(text) : undefined };
};
