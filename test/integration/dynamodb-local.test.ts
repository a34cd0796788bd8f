import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import type { DynamoDbCredentials } from '../../infra/local/dynamodb-local.ts';
import { ensureTable, ordersTableKey } from '../../infra/local/local-tables.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { dynamoDbEndpoint } from '../lib/local-api.ts';

/** The address of a /proc/net/tcp{,6} entry: 32-bit words in host (little-endian) byte order. */
const procAddress = (hex: string): string => {
  const bytes = hex.match(/.{8}/g)!.flatMap((word) =>
    word
      .match(/../g)!
      .reverse()
      .map((byte) => Number.parseInt(byte, 16)),
  );
  if (bytes.length === 4) return bytes.join('.');
  const v4Mapped = bytes.slice(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (v4Mapped) return `::ffff:${bytes.slice(12).join('.')}`;
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16));
  return groups.join(':');
};

/** Every local address listening on TCP `port`, as the kernel reports it (state 0A is LISTEN). */
const listeningAddresses = (port: number): string[] =>
  ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[3] === '0A' && Number.parseInt(fields[1]!.split(':')[1]!, 16) === port)
      .map((fields) => procAddress(fields[1]!.split(':')[0]!)),
  );

const isLoopback = (address: string) => /^(::ffff:)?127\./.test(address) || address === '0:0:0:0:0:0:0:1';

/** A raw request with the headers a browser would send (fetch() would not let a test set Origin freely); unsigned. */
const send = (method: string, headers: Record<string, string>, body = '') =>
  new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
    const call = request(dynamoDbEndpoint(), { method, headers }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
    });
    call.on('error', reject);
    call.end(body);
  });

/**
 * ListTables signed (AWS SigV4) with `credentials`, its Host and Origin set before it is signed, as
 * a page's browser or another client would send them; resolves with the status and the headers.
 */
const signedListTables = async ({
  host,
  origin,
  credentials = inject('dynamoDbCredentials'),
  clockOffsetMs = 0,
  unsigned,
}: {
  host?: string;
  origin?: string;
  credentials?: DynamoDbCredentials;
  /** How far from now the request is signed (the SDK's systemClockOffset). */
  clockOffsetMs?: number;
  /** A header sent but left out of the signature: taken off before signing, put back after. */
  unsigned?: string;
}) => {
  const client = new DynamoDBClient({
    endpoint: dynamoDbEndpoint(),
    region: 'us-east-1',
    credentials,
    maxAttempts: 1,
    systemClockOffset: clockOffsetMs,
  });
  if (unsigned !== undefined) {
    let value = '';
    client.middlewareStack.add(
      (next) => async (args) => {
        const sent = args.request as { headers: Record<string, string> };
        value = sent.headers[unsigned] ?? '';
        delete sent.headers[unsigned];
        return next(args);
      },
      { step: 'build', name: 'testUnsignedOff' },
    );
    type Middleware = Parameters<typeof client.middlewareStack.addRelativeTo>[0];
    client.middlewareStack.addRelativeTo(
      ((next: (args: { request: unknown }) => Promise<unknown>) => async (args: { request: unknown }) => {
        (args.request as { headers: Record<string, string> }).headers[unsigned] = value;
        return next(args);
      }) as unknown as Middleware,
      { relation: 'after', toMiddleware: 'httpSigningMiddleware', name: 'testUnsignedBack' },
    );
  }
  let headers: Record<string, string> = {};
  client.middlewareStack.add(
    (next) => async (args) => {
      const sent = args.request as { headers: Record<string, string> };
      if (host !== undefined) sent.headers.host = host;
      if (origin !== undefined) sent.headers.origin = origin;
      return next(args);
    },
    { step: 'build', name: 'testHostAndOrigin' },
  );
  client.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      headers = (result.response as { headers: Record<string, string> }).headers;
      return result;
    },
    { step: 'deserialize', name: 'testResponseHeaders' },
  );
  try {
    await client.send(new ListTablesCommand({}));
    return { status: 200, headers };
  } catch (error) {
    return { status: (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0, headers, error };
  } finally {
    client.destroy();
  }
};

const foreignOrigin = 'https://attacker.example';

describe('DynamoDB Local as the tests and npm start run it', () => {
  it('listens on loopback addresses only, never on every interface', () => {
    const addresses = listeningAddresses(Number(new URL(dynamoDbEndpoint()).port));
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.filter((address) => !isLoopback(address))).toEqual([]);
  });

  it('gives a web page from a foreign origin no CORS permission, for the preflight or the request itself', async () => {
    const preflight = await send('OPTIONS', {
      Origin: foreignOrigin,
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization,content-type,x-amz-date,x-amz-target',
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    const listTables = await signedListTables({ origin: foreignOrigin });
    // A request signed with its credentials is served (this machine's own tools call it); a browser would not hand its answer to the page.
    expect(listTables.status).toBe(200);
    expect(listTables.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('refuses a request addressed to any other host name (DNS rebinding): only 127.0.0.1 and localhost on its port are served', async () => {
    const port = new URL(dynamoDbEndpoint()).port;
    for (const host of [
      `rebind.attacker.example:${port}`,
      'rebind.attacker.example',
      `127.0.0.1`,
      `127.0.0.1:${Number(port) + 1}`,
      `[::1]:${port}`,
    ])
      expect((await signedListTables({ host })).status, host).toBe(403);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) expect((await signedListTables({ host })).status, host).toBe(200);
  });

  it('answers only requests signed with the credentials it was started with: anything else gets 403 before DynamoDB Local sees it', async () => {
    const own = inject('dynamoDbCredentials');
    const unsigned = await send(
      'POST',
      { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'DynamoDB_20120810.ListTables' },
      '{}',
    );
    expect(unsigned.status).toBe(403);
    // What every client used before (DynamoDB Local accepts any signature): a signature of the usual local credentials.
    const guessed = await signedListTables({ credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    expect(guessed.status).toBe(403);
    expect((guessed.error as Error).name).toBe('UnrecognizedClientException');
    // Its access key id with another secret: the signature is recomputed, not only the id compared.
    const forged = await signedListTables({ credentials: { accessKeyId: own.accessKeyId, secretAccessKey: 'guessed' } });
    expect(forged.status).toBe(403);
    expect((forged.error as Error).name).toBe('InvalidSignatureException');
    expect((await signedListTables({})).status).toBe(200);
  });

  it('refuses a signature more than 15 minutes old or ahead, as AWS does, and takes one within them', async () => {
    const minute = 60_000;
    for (const [offset, message] of [
      [-16 * minute, /^Signature expired: /],
      [16 * minute, /^Signature not yet current: /],
    ] as const) {
      const stale = await signedListTables({ clockOffsetMs: offset });
      expect([offset, stale.status, (stale.error as Error).name]).toEqual([offset, 403, 'InvalidSignatureException']);
      expect((stale.error as Error).message).toMatch(message);
    }
    for (const offset of [-14 * minute, 14 * minute])
      expect([offset, (await signedListTables({ clockOffsetMs: offset })).status]).toEqual([offset, 200]);
  });

  it('refuses a request whose operation (x-amz-target) is not among its signed headers, its signature good: a captured GetItem could be sent as a DeleteItem', async () => {
    const partly = await signedListTables({ unsigned: 'x-amz-target' });
    expect([partly.status, (partly.error as Error).name]).toEqual([403, 'InvalidSignatureException']);
    expect((partly.error as Error).message).toContain("'x-amz-target' must be a signed header");
  });

  it('signs and verifies a body as large as DynamoDB takes (a 390 KB item) and replays it whole to DynamoDB Local', async () => {
    const client = createDocumentClient({ endpoint: dynamoDbEndpoint() });
    const tableName = `signed-${randomUUID().slice(0, 8)}`;
    try {
      await ensureTable(client, tableName, ordersTableKey);
      const text = 'x'.repeat(390_000);
      await client.send(new PutCommand({ TableName: tableName, Item: { id: 1n, text } }));
      const item = (await client.send(new GetCommand({ TableName: tableName, Key: { id: 1n } }))).Item;
      expect((item?.text as string).length).toBe(text.length);
    } finally {
      client.destroy();
    }
  });
});
