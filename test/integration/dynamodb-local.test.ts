import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
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

/** A raw request with the headers a browser would send: fetch() would not let a test set Origin freely. */
const send = (method: string, headers: Record<string, string>, body = '') =>
  new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
    const call = request(dynamoDbEndpoint(), { method, headers }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
    });
    call.on('error', reject);
    call.end(body);
  });

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
    const listTables = await send(
      'POST',
      {
        Origin: foreignOrigin,
        'Content-Type': 'application/x-amz-json-1.0',
        'X-Amz-Target': 'DynamoDB_20120810.ListTables',
        Authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
      },
      '{}',
    );
    // The request is served (this machine's own tools may call it); a browser would not hand its answer to the page.
    expect(listTables.status).toBe(200);
    expect(listTables.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('refuses a request addressed to any other host name (DNS rebinding): only 127.0.0.1 and localhost on its port are served', async () => {
    const port = new URL(dynamoDbEndpoint()).port;
    const putItem = (host: string) =>
      send(
        'POST',
        {
          Host: host,
          'Content-Type': 'application/x-amz-json-1.0',
          'X-Amz-Target': 'DynamoDB_20120810.ListTables',
          Authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
        },
        '{}',
      );
    for (const host of [
      `rebind.attacker.example:${port}`,
      'rebind.attacker.example',
      `127.0.0.1`,
      `127.0.0.1:${Number(port) + 1}`,
      `[::1]:${port}`,
    ])
      expect((await putItem(host)).status, host).toBe(403);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) expect((await putItem(host)).status, host).toBe(200);
  });
});
