import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { dynamoDbEndpoint } from '../lib/local-api.ts';

// A smoke of `npm run load` (one very short, light round on the run's DynamoDB Local): the script
// starts the service, loads it, checks the table and reports. Its figures are not judged here.
describe('npm run load', () => {
  it('runs one short round and a short overload, and reports no 5xx to a cancel and no lost or double transition', async () => {
    const child = spawn(process.execPath, ['test/perf/load.ts'], {
      env: {
        ...process.env,
        DYNAMODB_ENDPOINT: dynamoDbEndpoint(),
        LOAD_SECONDS: '1',
        LOAD_ROUNDS: '1',
        LOAD_CONNECTIONS: '2',
        LOAD_ORDERS: '50',
        // The overload phase, very short: its shape is checked here, its figures only by npm run load.
        LOAD_OVERLOAD_SECONDS: '1',
        LOAD_OVERLOAD_CONNECTIONS: '4',
        LOAD_CHECK_FAIRNESS: '0',
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
    expect(output).toMatch(/cancels only: \d+\/s, p50 \d+ ms, p99 \d+ ms/);
    expect(output).toMatch(/mixed, cancels: \d+\/s \(\d+ % of cancels only\)/);
    expect(output).toMatch(/mixed, lists: \d+ .*refused: \d+/);
    expect(output).toContain(
      'OK: no 5xx (lists refused at the list concurrency aside), no unexpected status, every list whole, no lost or double transition',
    );
    // The timeout bounds a hang of the script, not its speed: it starts a service and tables of its own.
  }, 180_000);
});
