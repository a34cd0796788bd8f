import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiFiles } from '../../infra/openapi/cli.ts';
import { buildOpenApiDocument, servedOpenApiJson } from '../../infra/openapi/document.ts';
import { dynamoDbEndpoint, request, startTestApi } from '../lib/local-api.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const committed = readFileSync(resolve(repoRoot, openApiFiles.document), 'utf8');

describe('GET /v1/openapi.json on the local gateway', () => {
  let api: Awaited<ReturnType<typeof startTestApi>>;
  beforeAll(async () => {
    api = await startTestApi([], { documents: { '/v1/openapi.json': servedOpenApiJson } });
  });
  afterAll(() => api?.close());

  it('serves the committed document without a key', async () => {
    const response = await request(api.url, 'GET', '/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.text).toBe(committed);
  });

  it('is not an operation of the API: the document does not list it, and other methods find no route', async () => {
    expect(Object.keys(buildOpenApiDocument().paths ?? {})).not.toContain('/openapi.json');
    const response = await request(api.url, 'DELETE', '/openapi.json', api.auth);
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: 'route_not_found' });
  });
});

describe('npm start', () => {
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  });

  it('serves the document at /v1/openapi.json', async () => {
    const suffix = Math.random().toString(36).slice(2, 10);
    child = spawn(process.execPath, ['infra/local/start.ts'], {
      cwd: repoRoot,
      env: {
        ...process.env,
        PORT: '0',
        DYNAMODB_ENDPOINT: dynamoDbEndpoint(),
        ORDERS_TABLE: `openapi-orders-${suffix}`,
        API_KEYS_TABLE: `openapi-keys-${suffix}`,
        STORE_API_KEY: 'openapi-test-key-0123456789',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const url = await new Promise<string>((done, fail) => {
      child?.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /Store Orders API listening on (http:\/\/127\.0\.0\.1:\d+\/v1)\n/.exec(output);
        if (match) done(match[1]!);
      });
      child?.once('exit', (code) => fail(new Error(`npm start exited with ${code}: ${output}`)));
    });
    const response = await request(url, 'GET', '/openapi.json');
    expect(response.status).toBe(200);
    expect(response.text).toBe(committed);
  });
});
