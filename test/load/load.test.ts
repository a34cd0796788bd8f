import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { dynamoDbEndpoint } from '../support.ts';

// A smoke of `npm run load` (one very short, light round on the run's DynamoDB Local): the script
// starts the service, loads it, checks the table and reports. Its figures are not judged here.
describe('npm run load', () => {
  it('runs one short round and reports no 5xx and no lost or double transition', async () => {
    const child = spawn(process.execPath, ['test/load/load.ts'], {
      env: {
        ...process.env,
        DYNAMODB_ENDPOINT: dynamoDbEndpoint(),
        LOAD_SECONDS: '1',
        LOAD_ROUNDS: '1',
        LOAD_CONNECTIONS: '2',
        LOAD_ORDERS: '50',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [code] = await once(child, 'exit');
    expect(code, output).toBe(0);
    expect(output).toMatch(/round \| route \| requests \| req\/s \| p50 \| p99/);
    expect(output).toMatch(/1 \| GET \/v1\/store\/orders \| \d+ \|/);
    expect(output).toMatch(/1 \| DELETE \/v1\/store\/orders\/\{orderId\} \| \d+ \|/);
    expect(output).toMatch(/service memory before: rss [\d.]+ MB, heap [\d.]+ MB/);
    expect(output).toContain('OK: no 5xx, no unexpected status, every list whole, no lost or double transition');
  });
});
