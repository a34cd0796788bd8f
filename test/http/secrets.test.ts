import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { apiKeysTableKey, ensureTable } from '../../infra/local/local-tables.ts';
import { createApiKey, revokeApiKey } from '../../infra/ops/key-store.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { sendRaw } from '../lib/raw-http.ts';
import { startServiceProcess } from '../lib/service-process.ts';
import { dynamoDbEndpoint, order, startTestApi } from '../lib/local-api.ts';

// A secrets scan: with logging turned all the way up (DEBUG, and Powertools' own switch to log
// every Lambda event), the service is used with known keys — valid, revoked, unknown, malformed,
// in places they do not belong — and nothing it printed, stdout or stderr, may hold any of them.

const logEverything = { POWERTOOLS_LOG_LEVEL: 'DEBUG', POWERTOOLS_LOGGER_LOG_EVENT: 'true', POWERTOOLS_METRICS_DISABLED: 'false' };

/** Every way a test here sends a key; the scan looks for each key itself, whatever surrounds it. */
const requestsWithKeys = (keys: { valid: string; revoked: string; unknown: string }) => [
  { method: 'GET', path: '/v1/store/orders', authorization: `Bearer ${keys.valid}` },
  { method: 'GET', path: '/v1/store/orders', authorization: `Bearer  ${keys.valid}` },
  { method: 'DELETE', path: '/v1/store/orders/1', authorization: `Bearer ${keys.valid}` },
  { method: 'DELETE', path: '/v1/store/orders/2', authorization: `Bearer ${keys.valid}` },
  { method: 'DELETE', path: '/v1/store/orders/404', authorization: `Bearer ${keys.valid}` },
  { method: 'DELETE', path: '/v1/store/orders/not-an-id', authorization: `Bearer ${keys.valid}` },
  { method: 'GET', path: '/v1/store/orders', authorization: `Bearer ${keys.revoked}` },
  { method: 'DELETE', path: '/v1/store/orders/3', authorization: `Bearer ${keys.unknown}` },
  { method: 'GET', path: '/v1/store/orders', authorization: `Basic ${keys.valid}` },
  { method: 'GET', path: '/v1/store/orders', authorization: `Bearer ${keys.valid}"` },
  { method: 'GET', path: `/v1/store/orders?api_key=${keys.valid}`, authorization: `Bearer ${keys.unknown}` },
  { method: 'GET', path: '/v1/store/orders', authorization: `Bearer ${keys.valid}`, extra: `X-Api-Key: ${keys.revoked}\r\n` },
  { method: 'FOO', path: '/v1/store/orders', authorization: `Bearer ${keys.valid}` },
  { method: 'GET', path: `/v1/pets/${keys.unknown}`, authorization: `Bearer ${keys.valid}` },
];

const send = (port: number, r: ReturnType<typeof requestsWithKeys>[number]) =>
  sendRaw(port, `${r.method} ${r.path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${r.authorization}\r\n${r.extra ?? ''}\r\n`);

const expectNoKey = (output: string, keys: Record<string, string>) => {
  for (const [name, key] of Object.entries(keys)) expect(output.includes(key), `the ${name} key appears in the output`).toBe(false);
};

describe('the secrets scan', () => {
  it('finds no key in anything npm start printed', { timeout: 240_000 }, async () => {
    const suffix = randomUUID().slice(0, 8);
    const tables = { ORDERS_TABLE: `secrets-orders-${suffix}`, API_KEYS_TABLE: `secrets-keys-${suffix}` };
    const client = createDocumentClient({ endpoint: dynamoDbEndpoint() });
    const apiKeys = { client, tableName: tables.API_KEYS_TABLE };
    await ensureTable(client, tables.API_KEYS_TABLE, apiKeysTableKey);
    const revoked = await createApiKey(apiKeys, { name: 'revoked', prefix: 'so_local_' });
    await revokeApiKey(apiKeys, revoked.item.keyId);
    const keys = { valid: `so_local_valid-${randomUUID()}`, revoked: revoked.key, unknown: `so_local_unknown-${randomUUID()}` };

    const service = await startServiceProcess('npm', {
      DYNAMODB_ENDPOINT: dynamoDbEndpoint(),
      STORE_API_KEY: keys.valid,
      ...tables,
      ...logEverything,
    });
    expect(service.url, service.output()).toBeDefined();
    const port = Number(new URL(service.url!).port);
    for (const r of requestsWithKeys(keys)) expect((await send(port, r)).status).toBeGreaterThan(0);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);

    // It did log, at length: request lines, authorizer decisions, the events themselves.
    expect(service.output()).toContain('"message":"authorization granted"');
    expect(service.output()).toContain('"message":"authorization refused"');
    expect(service.output()).toContain('"message":"request completed"');
    expectNoKey(service.output(), keys);
  });

  describe('of the in-process local gateway', () => {
    let api: Awaited<ReturnType<typeof startTestApi>>;
    let captured = '';
    beforeAll(async () => {
      for (const [name, value] of Object.entries(logEverything)) vi.stubEnv(name, value);
      // The shared logger reads those switches when its module is first evaluated, and this file's
      // own imports (the test tables' DynamoDB client) already evaluated it: the handlers get fresh ones.
      vi.resetModules();
      const capture = (stream: NodeJS.WriteStream) => {
        const write = stream.write.bind(stream);
        vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
          captured += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
          return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
        });
      };
      capture(process.stdout);
      capture(process.stderr);
      // Handler modules are loaded here, after the switches above: they log at DEBUG with events.
      api = await startTestApi([order('1', 'pending'), order('2', 'shipped'), order('3', 'pending')]);
    });
    afterAll(async () => {
      vi.restoreAllMocks();
      vi.unstubAllEnvs();
      await api?.close();
    });

    it('finds no key in what the handlers and the gateway logged', async () => {
      const revoked = await createApiKey(api.apiKeys, { name: 'revoked', prefix: 'so_test_' });
      await revokeApiKey(api.apiKeys, revoked.item.keyId);
      const keys = { valid: api.key, revoked: revoked.key, unknown: `so_test_unknown-${randomUUID()}` };
      const port = Number(new URL(api.url).port);
      for (const r of requestsWithKeys(keys)) expect((await send(port, r)).status).toBeGreaterThan(0);
      expect(captured).toContain('"message":"authorization granted"');
      expect(captured).toContain('"message":"request completed"');
      expectNoKey(captured, keys);
    });
  });
});
