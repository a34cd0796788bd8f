import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localStage } from '../../infra/stage-config.ts';
import { createApiKey } from '../../infra/ops/key-store.ts';
import { errorRecord } from '../../shared/errors.ts';
import { type ServiceProcess, startServiceProcess, stopServiceProcess } from '../lib/service-process.ts';
import { createTestTables, dynamoDbEndpoint, order, request } from '../lib/local-api.ts';

// Orders as large as the table contract allows (about 200 bytes of JSON each): together more than
// the ~4 MB that the kernel's and Node's buffers on loopback take in for a client that reads nothing.
const fatOrders = Array.from({ length: 30_000 }, (_, i) =>
  order(String(9_000_000_000_000_000_000n + BigInt(i)), 'x'.repeat(64), {
    petId: '9223372036854775807',
    quantity: '2000000000',
    shipDate: '2026-11-24T02:00:00.000+00:00',
    complete: false,
  }),
);

const key = 'so_local_stall-test-key-0000000000';

/** Sends the list request and, once the answer has begun (the function runs), reads nothing more. */
const pausedList = async (port: number): Promise<{ socket: Socket; first: Buffer }> => {
  const socket = connect(port, '127.0.0.1');
  // A cut list aborts the connection: a reset, which is how this client learns of the cut.
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.write(`GET /v1/store/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  const [first] = (await once(socket, 'data')) as [Buffer];
  socket.pause();
  return { socket, first };
};

/** Everything the socket received, once it reads again, until the server has closed it. */
const drain = async ({ socket, first }: { socket: Socket; first: Buffer }): Promise<string> => {
  const chunks: Buffer[] = [first];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.resume();
  // Not `once(socket, 'close')`, which rejects on the reset that an aborted list is.
  await new Promise((resolve) => socket.once('close', resolve));
  return Buffer.concat(chunks).toString('latin1');
};

/** `npm start` on the shared tables, judging its lists over windows of `stallSeconds`. */
const startService = (tables: Awaited<ReturnType<typeof createTestTables>>, stallSeconds: number) =>
  startServiceProcess('npm', {
    DYNAMODB_ENDPOINT: dynamoDbEndpoint(),
    ORDERS_TABLE: tables.orders.tableName,
    API_KEYS_TABLE: tables.apiKeys.tableName,
    LIST_LEASES_TABLE: tables.listLeases.tableName,
    STORE_API_KEY: key,
    LIST_STALL_SECONDS: String(stallSeconds),
    POWERTOOLS_LOG_LEVEL: 'INFO',
    POWERTOOLS_METRICS_DISABLED: 'false',
  });

// Both services on one seeded store, started together: seeding and starting are most of this
// file's time. The developer's key takes no lease, and each service has its own list slots.
let stalls: ServiceProcess;
let slowReads: ServiceProcess;
beforeAll(async () => {
  const tables = await createTestTables(fatOrders);
  // Registered before either start, so neither start races the other to register it.
  await createApiKey(tables.apiKeys, { name: 'local (STORE_API_KEY)', prefix: '', key, tier: localStage.developerKeyTier });
  // Eight seconds of waiting per judgement for the slow reader: a Scan page (about 200 KB here) is
  // taken well within it at half the minimum rate.
  [stalls, slowReads] = await Promise.all([startService(tables, 1), startService(tables, 8)]);
  for (const service of [stalls, slowReads]) expect(service.url, service.output()).toBeDefined();
}, 180_000);
afterAll(async () => {
  await Promise.all([stalls, slowReads].filter((service) => service?.exitCode === undefined).map((service) => stopServiceProcess(service)));
});

describe('a list whose client stops reading (npm start, LIST_STALL_SECONDS=1)', () => {
  let service: ServiceProcess;
  let port: number;
  beforeAll(() => {
    service = stalls;
    port = Number(new URL(service.url!).port);
  });

  it('is cut, stops scanning, logs and counts it, and frees its slot for the next list', async () => {
    const auth = { Authorization: `Bearer ${key}` };
    // Every list slot of the local stage taken by a client that reads nothing.
    const paused = await Promise.all(Array.from({ length: localStage.listReservedConcurrency }, () => pausedList(port)));
    // Meanwhile a list is refused at once, as API Gateway answers a function at its reserved concurrency.
    const refused = await request(service.url!, 'GET', '/store/orders', auth);
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual(errorRecord('service_unavailable'));
    expect(refused.headers.get('retry-after')).toBe('1');

    // The readiness signal: the function's own log line for each cut list (no clock in this test).
    const cuts = () => service.output().match(/"message":"list cut: the client stopped reading"/g)?.length ?? 0;
    while (cuts() < paused.length) await sleep(100);
    const bodies = await Promise.all(paused.map(drain));
    for (const body of bodies) {
      expect(body.slice(0, 15)).toBe('HTTP/1.1 200 OK');
      // Cut: the array never closes, and no chunked terminator pretends the answer is whole.
      expect(body.slice(-20)).not.toMatch(/\](\r\n0\r\n\r\n)?$/);
      expect(body.length).toBeLessThan(fatOrders.length * 200);
    }
    expect(service.output()).toMatch(/"StalledListsCut":1/);
    // No cut list reports itself as listed in full.
    expect(service.output()).not.toContain('"message":"orders listed"');

    // The slots are free again: the next list runs to its end.
    const next = await fetch(`${service.url}/store/orders`, { headers: auth });
    expect(next.status).toBe(200);
    const text = await next.text();
    expect(text.endsWith(']')).toBe(true);
    expect(text.match(/"id":/g)?.length).toBe(fatOrders.length);
  }, 120_000);

  it("aborts a paused client's connection at the cut: the client's next read is a reset, not the rest of the list", async () => {
    const before = service.output().match(/"message":"list cut: the client stopped reading"/g)?.length ?? 0;
    const { socket, first } = await pausedList(port);
    // How the client learns of the cut: a reset, or (a connection only closed) a clean end after all it had not read.
    let ending: string | undefined;
    socket.on('error', (error: NodeJS.ErrnoException) => (ending ??= error.code));
    socket.once('end', () => (ending ??= 'end'));
    // The readiness signal: the cut's own log line, then the line of its cut response; the client reads nothing meanwhile.
    const cut = () =>
      (service.output().match(/"message":"list cut: the client stopped reading"/g)?.length ?? 0) > before &&
      /"message":"response cut short"/.test(service.output().split('"message":"list cut: the client stopped reading"').at(-1)!);
    while (!cut()) await sleep(100);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.resume();
    await new Promise((resolve) => socket.once('close', resolve));
    // Aborted (RST): the client reads what its own buffers hold (Node's 64 KB and the kernel's receive
    // buffer, which autotuning grows from 128 KB to several MB, so its size is not the test), then
    // the reset. A connection merely closed hands it the server's send buffer too, then a clean end
    // ('end': measured on the old gateway, about 4 MB more).
    expect(ending).toBe('ECONNRESET');
    const after = Buffer.concat(chunks);
    const body = Buffer.concat([first, after]).toString('latin1');
    expect(body.slice(0, 15)).toBe('HTTP/1.1 200 OK');
    expect(body.slice(-20)).not.toMatch(/\](\r\n0\r\n\r\n)?$/);
  }, 120_000);

  it('frees the slots of lists whose clients leave mid-list, and goes on serving', async () => {
    const auth = { Authorization: `Bearer ${key}` };
    const left = await Promise.all(Array.from({ length: localStage.listReservedConcurrency }, () => pausedList(port)));
    const leftLines = () => service.output().match(/"message":"list left by its client"/g)?.length ?? 0;
    const cutLines = () => service.output().match(/"message":"response cut short"/g)?.length ?? 0;
    const [leftBefore, cutBefore] = [leftLines(), cutLines()];
    for (const { socket } of left) socket.destroy();
    // The readiness signal: each left list's one line (its client's outcome, not an error; or, were the
    // 1 s stall window to pass before the reset, its cut); then the slots come free.
    while (leftLines() + cutLines() < leftBefore + cutBefore + left.length) await sleep(100);
    expect(leftLines()).toBeGreaterThan(leftBefore);
    let next = await fetch(`${service.url}/store/orders`, { headers: auth });
    // A slot is given back once the list's function has returned, just after its log line: at most a refusal or two.
    while (next.status === 503) {
      await next.text();
      next = await fetch(`${service.url}/store/orders`, { headers: auth });
    }
    expect(next.status).toBe(200);
    expect((await next.text()).match(/"id":/g)?.length).toBe(fatOrders.length);
  }, 120_000);
});

describe('a list whose client reads below the minimum rate (npm start, LIST_STALL_SECONDS=8)', () => {
  let service: ServiceProcess;
  let port: number;
  beforeAll(() => {
    service = slowReads;
    port = Number(new URL(service.url!).port);
  });

  it('is cut though it keeps reading, its connection aborted while the client still reads, and its slot freed', async () => {
    const auth = { Authorization: `Bearer ${key}` };
    const { socket, first } = await pausedList(port);
    let isClosed = false;
    socket.once('close', () => (isClosed = true));
    // About 50 KB/s, a quarter of the minimum (slower than DynamoDB Local yields the list even on a busy
    // machine, so the list waits for its client): 5 KB every 100 ms, for as long as the connection lasts (a minute at most).
    const chunks: Buffer[] = [first];
    const started = Date.now();
    while (!isClosed && Date.now() - started < 60_000) {
      const chunk = (socket.read(5_120) as Buffer | null) ?? (socket.read() as Buffer | null);
      if (chunk !== null) chunks.push(chunk);
      await sleep(100);
    }
    // Closed by the server while the client was still reading: the list was cut, and said so. Which
    // watch cuts it depends on loopback's TCP buffers (megabytes, whose window opens in large steps,
    // so a chunk may wait longer than the window): the rate's or the stall's; the shipped-bundle
    // test (test/shipped/deployed-stage.test.ts) shows the rate cut with a steady reader.
    expect(isClosed).toBe(true);
    expect(service.output().match(/"message":"list cut: [^"]*"/g)).toHaveLength(1);
    expect(service.output()).toMatch(/"StalledListsCut":1/);
    const body = Buffer.concat(chunks).toString('latin1');
    expect(body.slice(0, 15)).toBe('HTTP/1.1 200 OK');
    // Aborted: no closing bracket, no chunked terminator.
    expect(body.slice(-20)).not.toMatch(/\](\r\n0\r\n\r\n)?$/);
    const next = await fetch(`${service.url}/store/orders`, { headers: auth });
    expect(next.status).toBe(200);
    expect((await next.text()).match(/"id":/g)?.length).toBe(fatOrders.length);
  }, 120_000);
});
