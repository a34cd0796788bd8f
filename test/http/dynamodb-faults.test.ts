import { readdirSync, readFileSync } from 'node:fs';
import { get } from 'node:http';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../infra/local/dynamodb-local.ts';
import { putOrders } from '../../infra/local/seed.ts';
import { apiKeysTableKey, ensureTable, listLeasesTableKey, ordersTableKey } from '../../infra/local/local-tables.ts';
import { localStage } from '../../infra/stage-config.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { order, request, startTestApi } from '../lib/local-api.ts';

// Real faults on a DynamoDB Local of this file's own (the run's shared one must stay healthy):
// a paused Java process (SIGSTOP) is a hang — connections open, nothing answers — and a
// killed one, restarted on the same port, is an outage the service must recover from by
// itself. (In memory: with a data folder DynamoDB Local starts and writes several times
// slower here, so the test puts the tables back itself, as a data folder would have kept them.)
//
// Elapsed times are checked only as generous "not hung" bounds: a call's deadline is 5 s
// (docs/operating.md#reliability); without deadlines a request waits for the function's timeout (10 s)
// or, for the list (15 min), as long as the database hangs.
const notHungMs = 9_000;

let dynamoDb: DynamoDbLocal;
let paused = false;

/** Each thread's state letter (proc(5): the field after the parenthesised name); `T` is stopped by a signal. */
const threadStates = (pid: number) =>
  readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0];
  });

/**
 * SIGSTOP is asynchronous: kill() returns once the signal is queued, and each thread stops when
 * it next runs (seen here: the JVM still `R` right after kill(), and on a loaded machine a request
 * sent at once was answered). The hang starts when every thread has stopped.
 */
const pause = async () => {
  process.kill(dynamoDb.pid!, 'SIGSTOP');
  paused = true;
  await vi.waitFor(() => expect(threadStates(dynamoDb.pid!).filter((state) => state !== 'T')).toEqual([]), {
    timeout: 30_000,
    interval: 10,
  });
};
const resume = () => {
  if (paused) process.kill(dynamoDb.pid!, 'SIGCONT');
  paused = false;
};
/** Resumes DynamoDB Local and waits until it answers again (a busy machine may need a moment). */
const resumed = async () => {
  resume();
  const client = createDocumentClient({ endpoint: dynamoDb.endpoint });
  try {
    await client.send(new ListTablesCommand({}));
  } finally {
    client.destroy();
  }
};

const pending = Array.from({ length: 20 }, (_, i) => order(String(i + 1), 'pending'));
let api: Awaited<ReturnType<typeof startTestApi>>;
/** The list read one item per Scan request from one segment, so that a hang can start mid-list. */
let slowList: Awaited<ReturnType<typeof startTestApi>>;

beforeAll(async () => {
  dynamoDb = await startDynamoDbLocal();
  // This file's own DynamoDB Local answers only its own credentials: every client here signs with them.
  vi.stubEnv('AWS_ACCESS_KEY_ID', dynamoDb.credentials.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', dynamoDb.credentials.secretAccessKey);
  api = await startTestApi(pending, { dynamoDbEndpoint: dynamoDb.endpoint });
  vi.stubEnv('SCAN_PAGE_SIZE', '1');
  const many = Array.from({ length: 500 }, (_, i) => order(String(i + 1), 'pending', { petId: String(i) }));
  slowList = await startTestApi(many, { dynamoDbEndpoint: dynamoDb.endpoint, stage: { ...localStage, scanSegments: 1 } });
  vi.unstubAllEnvs();
  vi.stubEnv('AWS_ACCESS_KEY_ID', dynamoDb.credentials.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', dynamoDb.credentials.secretAccessKey);
});
afterAll(async () => {
  vi.unstubAllEnvs();
  resume();
  await api?.close();
  await slowList?.close();
  await dynamoDb?.stop();
});

const timed = async <T>(work: () => Promise<T>) => {
  const startedAt = Date.now();
  const result = await work();
  return { result, elapsedMs: Date.now() - startedAt };
};

const expectUnavailable = (response: Awaited<ReturnType<typeof request>>) => {
  expect(response.status).toBe(503);
  expect(response.body).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(response.headers.get('retry-after')).toBe('1');
};

const storedStatus = async (id: string) =>
  (await api.client.send(new GetCommand({ TableName: api.orders.tableName, Key: { id: Number(id) } }))).Item?.status as string | undefined;

describe('while DynamoDB hangs (process paused)', () => {
  it('a cancel answers 503 service_unavailable with Retry-After within a few seconds, and cancels once DynamoDB answers again', async () => {
    // The key's Allow is cached first, so only the cancel's own UpdateItem meets the hang.
    expect((await request(api.url, 'DELETE', '/store/orders/1', api.auth)).status).toBe(204);
    await pause();
    try {
      const { result, elapsedMs } = await timed(() => request(api.url, 'DELETE', '/store/orders/2', api.auth));
      expectUnavailable(result);
      expect(elapsedMs).toBeLessThan(notHungMs);
    } finally {
      await resumed();
    }
    // A 503 means "not known whether it happened": the retry is safe, cancelling is idempotent.
    expect((await request(api.url, 'DELETE', '/store/orders/2', api.auth)).status).toBe(204);
    expect(await storedStatus('2')).toBe('cancelled');
  });

  it('the authorizer fails within a few seconds with service_unavailable, which the gateway answers as 500 (not 401)', async () => {
    const { key } = await createApiKey(api.apiKeys, { name: 'never cached', prefix: 'so_test_' });
    const authorizer = (await import('../../functions/authorizer/handler.ts')).handler as unknown as (
      event: APIGatewayTokenAuthorizerEvent,
      context: Context,
    ) => Promise<unknown>;
    const context = { getRemainingTimeInMillis: () => 10_000, functionName: 'authorizer', awsRequestId: 'test' } as unknown as Context;
    const event = {
      type: 'TOKEN',
      authorizationToken: `Bearer ${key}`,
      methodArn: 'arn:aws:execute-api:local:0:api/local/GET/v1/store/orders',
    };
    await pause();
    try {
      // Both at once, under one hang: the function as Lambda runs it, and the gateway in front of it.
      const [direct, viaGateway] = await Promise.all([
        timed(() => authorizer(event as APIGatewayTokenAuthorizerEvent, context).catch((error: unknown) => error)),
        timed(() => request(api.url, 'GET', '/store/orders', { Authorization: `Bearer ${key}` })),
      ]);
      expect(direct.result).toMatchObject({ statusCode: 503, code: 'service_unavailable' });
      expect(direct.elapsedMs).toBeLessThan(notHungMs);
      expect(viaGateway.result.status, JSON.stringify(viaGateway.result.body)).toBe(500);
      expect(viaGateway.result.body).toMatchObject({ code: 'internal_error', status: 500 });
      expect(viaGateway.elapsedMs).toBeLessThan(notHungMs);
    } finally {
      await resumed();
    }
    expect((await request(api.url, 'GET', '/store/orders', { Authorization: `Bearer ${key}` })).status).toBe(200);
  });

  it('a list answers 503 before its first byte when the first page cannot be read', async () => {
    await request(api.url, 'GET', '/store/orders', api.auth); // caches the key's Allow
    await pause();
    try {
      const { result, elapsedMs } = await timed(() => request(api.url, 'GET', '/store/orders', api.auth));
      expectUnavailable(result);
      expect(elapsedMs).toBeLessThan(notHungMs);
    } finally {
      await resumed();
    }
    expect((await request(api.url, 'GET', '/store/orders', api.auth)).status).toBe(200);
  });

  it('a list whose reads hang mid-stream is cut (never a complete-looking array) within a few seconds', async () => {
    await request(slowList.url, 'DELETE', '/store/orders/0', slowList.auth); // caches the key's Allow (404)
    let stopped: Promise<void> | undefined;
    const outcome = await new Promise<{ status?: number; text: string; ended: 'complete' | 'cut' | 'still waiting'; elapsedMs: number }>(
      (resolve) => {
        let text = '';
        let status: number | undefined;
        const startedAt = Date.now();
        const finish = (ended: 'complete' | 'cut' | 'still waiting') => resolve({ status, text, ended, elapsedMs: Date.now() - startedAt });
        // Far beyond the bound: if this fires, the stream hung with the database.
        const stillWaiting = setTimeout(() => {
          finish('still waiting');
          req.destroy();
        }, 15_000);
        const req = get(`${slowList.url}/store/orders`, { headers: slowList.auth }, (res) => {
          status = res.statusCode;
          // 500 Scan requests of one item each are still running when the first bytes arrive.
          stopped = pause();
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            clearTimeout(stillWaiting);
            finish('complete');
          });
          res.on('error', () => {
            clearTimeout(stillWaiting);
            finish('cut');
          });
        });
        req.on('error', () => {
          clearTimeout(stillWaiting);
          finish('cut');
        });
      },
    ).finally(resumed);
    await stopped;
    expect(outcome.status).toBe(200);
    expect(outcome.ended).toBe('cut');
    expect(outcome.text.startsWith('[')).toBe(true);
    expect(outcome.text.endsWith(']')).toBe(false);
    expect(outcome.elapsedMs).toBeLessThan(notHungMs + 2_000);
    expect((await request(slowList.url, 'DELETE', '/store/orders/1', slowList.auth)).status).toBe(204);
  });
});

describe('while DynamoDB is down (process killed), and after it is back', () => {
  it('answers 503 (500 from an uncached authorizer), then recovers by itself once DynamoDB is restarted on its port', async () => {
    const { key } = await createApiKey(api.apiKeys, { name: 'uncached during the outage', prefix: 'so_test_' });
    expect((await request(api.url, 'DELETE', '/store/orders/3', api.auth)).status).toBe(204);
    const { port } = dynamoDb;
    process.kill(dynamoDb.pid!, 'SIGKILL');
    await dynamoDb.stop(); // waits for the exit

    const cancel = await timed(() => request(api.url, 'DELETE', '/store/orders/4', api.auth));
    expectUnavailable(cancel.result);
    expect(cancel.elapsedMs).toBeLessThan(notHungMs);
    expectUnavailable(await request(api.url, 'GET', '/store/orders', api.auth));
    expect((await request(api.url, 'GET', '/store/orders', { Authorization: `Bearer ${key}` })).status).toBe(500);

    // Restarted on its port with the same credentials, as its callers still hold them.
    dynamoDb = await startDynamoDbLocal({ port, credentials: dynamoDb.credentials });
    expect(dynamoDb.port).toBe(port);
    // What a data folder would have kept: the tables, the orders, the keys.
    await ensureTable(api.client, api.orders.tableName, ordersTableKey);
    await ensureTable(api.client, api.apiKeys.tableName, apiKeysTableKey);
    await ensureTable(api.client, api.listLeases.tableName, listLeasesTableKey);
    await putOrders(api.orders, pending);
    await createApiKey(api.apiKeys, { name: 'test', prefix: '', key });

    // The same service process, its clients untouched since the outage.
    expect((await request(api.url, 'DELETE', '/store/orders/4', api.auth)).status).toBe(204);
    expect((await request(api.url, 'GET', '/store/orders', { Authorization: `Bearer ${key}` })).status).toBe(200);
    expect(await storedStatus('4')).toBe('cancelled');
    expect(await storedStatus('5')).toBe('pending');
  });
});
