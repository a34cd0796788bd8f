import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, NumberValue, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { functionEnvironment, functionSettings } from '../../infra/function-settings.ts';
import { installLambdaStreamingGlobals, invokeWithTimeout, LambdaResponseStream } from '../../infra/local/lambda-runtime.ts';
import { stages } from '../../infra/stage-config.ts';

// The longest a list may run, without waiting for it: the list function of the production stage,
// with the environment and timeout the template gives it (infra/function-settings.ts), on fake
// timers. DynamoDB is a mock (a store that never ends, each Scan page taking 2 s, which DynamoDB
// Local cannot be made to do), the client an honest one that takes 1,000,000 bytes/s, five times the
// minimum rate: only the duration bound can end this list.

const clientBytesPerSecond = 1_000_000;
const scanPageMs = 2_000;

/** A response stream whose client takes each write at `clientBytesPerSecond` (fake time). */
class HonestClient extends LambdaResponseStream {
  bytes = 0;
  lastTakenAt = 0;
  protected deliver(bytes: Buffer, done: () => void) {
    setTimeout(
      () => {
        this.bytes += bytes.length;
        this.lastTakenAt = Date.now();
        done();
      },
      (bytes.length / clientBytesPerSecond) * 1000,
    );
  }
  protected finish(done: () => void) {
    done();
  }
}

/** Twenty orders a page, after `scanPageMs`, and always a next page. */
let nextId = 1n;
const endlessScan = async () => {
  await new Promise((resolve) => setTimeout(resolve, scanPageMs));
  const Items = Array.from({ length: 20 }, () => ({
    id: NumberValue.from(String(nextId++)),
    petId: NumberValue.from('9223372036854775807'),
    quantity: NumberValue.from('1'),
    status: 'pending',
    complete: false,
  }));
  return { Items, LastEvaluatedKey: { id: Items.at(-1)!.id } };
};

const event = {
  headers: {},
  httpMethod: 'GET',
  path: '/v1/store/orders',
  requestContext: { requestId: 'duration-test', authorizer: { principalId: 'key_0123456789abcdef', tier: 'standard' } },
} as unknown as APIGatewayProxyEvent;

describe('a list still read at an honest rate (production settings, fake timers)', () => {
  const dynamo = mockClient(DynamoDBDocumentClient);
  const settings = functionSettings.listOrders;
  let handler: (event: APIGatewayProxyEvent, stream: LambdaResponseStream, context: Context) => Promise<void>;
  const printed: string[] = [];

  beforeAll(async () => {
    const environment = functionEnvironment(settings, stages.production, {
      orders: 'orders',
      apiKeys: 'api-keys',
      listLeases: 'leases',
    });
    for (const [name, value] of Object.entries({
      ...environment,
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
      POWERTOOLS_METRICS_DISABLED: 'false',
    }))
      vi.stubEnv(name, value);
    installLambdaStreamingGlobals();
    // The settings above already loaded the logger and metrics (silent in tests): the handler's modules load afresh, with the stage's environment.
    vi.resetModules();
    handler = (await import('../../functions/list-orders/handler.ts')).handler as never;
    dynamo.on(DescribeTableCommand).resolves({ Table: { ItemCount: 1_000 } });
    dynamo.on(PutCommand).resolves({});
    dynamo.on(DeleteCommand).resolves({});
    dynamo.on(ScanCommand).callsFake(endlessScan);
    // What the function prints (warnings and errors go to stderr), as CloudWatch Logs would receive it.
    for (const stream of [process.stdout, process.stderr])
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
        printed.push(String(chunk));
        return true;
      });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
  });
  afterAll(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    dynamo.restore();
    vi.unstubAllEnvs();
  });

  it("is cut at 14 minutes, within the function timeout, logged and counted as the version's failure (not a stall), and its lease given back", async () => {
    // The template's timeout for the list: the cut comes a minute before it.
    expect(settings.timeoutSeconds).toBe(900);
    const client = new HonestClient();
    const startedAt = Date.now();
    let ended: { error?: unknown; at: number } | undefined;
    void invokeWithTimeout({ name: 'listOrders', memorySize: settings.memorySize, timeoutSeconds: settings.timeoutSeconds }, (context) =>
      handler(event, client, context),
    ).then(
      () => (ended = { at: Date.now() }),
      (error: unknown) => (ended = { error, at: Date.now() }),
    );
    // Fake time, one second a step, each step letting streams and promises run (setImmediate stays real).
    while (ended === undefined && Date.now() - startedAt < (settings.timeoutSeconds + 60) * 1000) {
      await vi.advanceTimersByTimeAsync(1_000);
      await new Promise((resolve) => setImmediate(resolve));
    }

    // Ended by the duration cut, at 14 minutes (a few Scan pages late at most), not by the function's timeout.
    expect(ended?.error).toMatchObject({ name: 'ClientStalledError', message: expect.stringMatching(/^the list ran \d+ s, its limit$/) });
    const ranSeconds = (ended!.at - startedAt) / 1000;
    expect(ranSeconds).toBeGreaterThanOrEqual(14 * 60);
    expect(ranSeconds).toBeLessThan(14 * 60 + 10);
    // Honest to the end: the client took its bytes until the cut, at about its rate.
    expect(ended!.at - client.lastTakenAt).toBeLessThan(scanPageMs * 2);
    // The store gives about 7 KB/s (8 segments of 20 orders every 2 s): all of it reached the client.
    expect(client.bytes).toBeGreaterThan(14 * 60 * 5_000);

    const lines = printed
      .join('')
      .split('\n')
      .filter((line) => line.startsWith('{'));
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const cuts = records.filter((record) => String(record.message).startsWith('list cut'));
    expect(cuts).toEqual([expect.objectContaining({ message: 'list cut: it ran too long', reason: expect.stringMatching(/its limit$/) })]);
    // Not the client's doing: ListsRanTooLong, which ListOrdersErrors adds, never StalledListsCut, which it subtracts.
    expect(records.filter((record) => record.ListsRanTooLong === 1)).toHaveLength(1);
    expect(records.filter((record) => 'StalledListsCut' in record)).toEqual([]);
    expect(dynamo.commandCalls(PutCommand)).toHaveLength(1);
    expect(dynamo.commandCalls(DeleteCommand)).toHaveLength(1);
  }, 120_000);
});
