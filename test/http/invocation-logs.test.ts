import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { localStage } from '../../infra/stage-config.ts';
import { order, startTestApi } from '../lib/local-api.ts';

// Lambda runs one invocation at a time in an execution environment, so a function's logger keys
// and DynamoDB-call record are its invocation's. The local gateway runs many invocations in one
// process: each must still log under its own function name and request id, with its own DynamoDB
// calls, as on Lambda (and as on Lambda Managed Instances, where one environment serves several).

type LogLine = {
  message: string;
  function_name?: string;
  request_id?: string;
  operation?: string;
  outcome?: string;
  dynamoDb?: { operation: string }[];
};

const orders = Array.from({ length: 3_000 }, (_, i) => order(String(10_000 + i), 'pending', { petId: String(i), quantity: '1' }));

describe('local logs of requests running side by side', () => {
  let api: Awaited<ReturnType<typeof startTestApi>>;
  let port: number;
  let captured = '';
  beforeAll(async () => {
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
    // The shared logger reads its level when its module is first evaluated, and this file's imports
    // already evaluated it: the handlers get fresh modules, at INFO.
    vi.resetModules();
    // Errors and warnings go to stderr, the rest to stdout.
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
        captured += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
        return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
      });
    }
    // Slots for every list of the test at once: each is an invocation of its own, none refused by the gateway.
    api = await startTestApi(orders, { stage: { ...localStage, listReservedConcurrency: 8 } });
    port = Number(new URL(api.url).port);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    await api?.close();
  });

  /** A request over a socket of its own; `leave` resets it once the answer has begun. Resolves with its X-Request-Id. */
  const send = async (method: string, path: string, leave: boolean): Promise<string> => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    let received = '';
    const requestId = new Promise<string>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
        const id = /\r\nX-Request-Id: ([^\r]+)\r\n/i.exec(received)?.[1];
        if (id !== undefined) resolve(id);
      });
    });
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(
      `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${api.auth.Authorization}\r\nConnection: close\r\n\r\n`,
    );
    const id = await requestId;
    if (leave) socket.resetAndDestroy();
    await closed;
    return id;
  };

  it('logs each invocation under its own function name and request id, with its own DynamoDB calls', async () => {
    const left = Array.from({ length: 5 }, () => send('GET', '/v1/store/orders', true));
    const whole = send('GET', '/v1/store/orders', false);
    const cancels = orders.slice(0, 6).map((o) => send('DELETE', `/v1/store/orders/${o.id}`, false));
    const [leftIds, wholeId, cancelIds] = await Promise.all([Promise.all(left), whole, Promise.all(cancels)]);
    expect(new Set([...leftIds, wholeId, ...cancelIds]).size).toBe(12);
    // Each left list's function notices, ends and logs within moments; wait for every line.
    await vi.waitFor(
      () => {
        const logged = new Set(lines().map((line) => line.request_id));
        expect([...leftIds, wholeId, ...cancelIds].filter((id) => !logged.has(id))).toEqual([]);
      },
      { timeout: 30_000, interval: 100 },
    );

    const all = lines();
    const functionOf = new Map<string, Set<string | undefined>>();
    for (const line of all.filter((l) => l.request_id !== undefined))
      functionOf.set(line.request_id!, new Set([...(functionOf.get(line.request_id!) ?? []), line.function_name]));
    // One function per request id, and the one its route names.
    for (const id of [...leftIds, wholeId]) expect([...functionOf.get(id)!], id).toEqual(['listOrders']);
    for (const id of cancelIds) expect([...functionOf.get(id)!], id).toEqual(['cancelOrder']);
    // No line of a route's function is without its request id (the authorizer has none to log).
    expect(all.filter((l) => l.function_name !== 'authorizer' && l.request_id === undefined).map((l) => l.message)).toEqual([]);
    // Lines carry the operation their function serves.
    for (const line of all.filter((l) => l.operation !== undefined && l.function_name !== 'authorizer'))
      expect(line.operation, line.message).toBe(line.function_name);

    // Each completion line lists only its own request's DynamoDB calls.
    const completion = (id: string) => {
      const line = all.find((l) => l.request_id === id && l.outcome !== undefined);
      expect(line, `the completion line of ${id}`).toBeDefined();
      return line!;
    };
    for (const id of cancelIds) expect(completion(id).dynamoDb?.map((call) => call.operation) ?? [], id).toEqual(['UpdateItem']);
    expect(completion(wholeId).outcome).toBe('ok');
    // The list's own calls: its Scan pages and, unless another list of this process read it within
    // its time to live (the item count is kept per process, as per Lambda environment), the table's
    // size; none of the cancels' UpdateItems.
    const own = completion(wholeId).dynamoDb?.map((call) => call.operation) ?? [];
    expect(own).toContain('Scan');
    expect(new Set(own.filter((operation) => operation !== 'DescribeTable'))).toEqual(new Set(['Scan']));
  });

  /** The JSON log lines the functions wrote (after start: every one a request's). */
  const lines = (): LogLine[] =>
    captured
      .split('\n')
      .filter((line) => line.startsWith('{') && line.includes('"function_name"'))
      .map((line) => JSON.parse(line) as LogLine);
});
