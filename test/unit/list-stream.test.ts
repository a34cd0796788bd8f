import { text } from 'node:stream/consumers';
import { Readable } from 'node:stream';
import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { maxListMs, minBytesPerSecond, releaseMarginMs } from '../../functions/list-orders/list-cuts.ts';
import {
  ClientStalledError,
  endOfInvocation,
  jsonArray,
  listBody,
  listEnding,
  readerWatch,
} from '../../functions/list-orders/list-stream.ts';
import type { Order } from '../../shared/schemas.ts';

// The v1 list's stream on its own (functions/list-orders/list-stream.ts): no DynamoDB, no lease
// table, the Scan a generator of pages. The handler around it is tested by the HTTP and shipped tests.

const order = (id: string): Order => ({ id, petId: '9223372036854775807', quantity: '1', status: 'pending' });

/** A Scan of these pages; `returned` says whether the list stopped it (its `finally` ran). */
const scan = (pages: Order[][], failAfter?: number) => {
  const state = { returned: false };
  const generator = (async function* () {
    try {
      for (const [index, page] of pages.entries()) {
        if (index === failAfter) throw new Error('DynamoDB failed mid-list');
        yield page;
      }
    } finally {
      state.returned = true;
    }
  })();
  return { generator, state };
};

/** The array as a client reads it, from a scan's first page on, and what the list told its watch and its end. */
const readArray = async (pages: Order[][], options: { maxBytes?: number; failAfter?: number; stringIds?: boolean } = {}) => {
  const { generator, state } = scan(pages, options.failAfter);
  const waited: (number | false)[] = [];
  const ended: boolean[] = [];
  const stop = vi.fn();
  const first = await generator.next();
  const array = jsonArray(first, generator, {
    startedAt: performance.now(),
    maxBytes: options.maxBytes ?? Infinity,
    stringIds: options.stringIds ?? false,
    waiting: (bytes) => waited.push(bytes),
    stop,
    end: async (whole = false) => {
      ended.push(whole);
      await generator.return(undefined);
    },
  });
  let body = '';
  let error: unknown;
  try {
    for await (const chunk of array) body += chunk;
  } catch (caught) {
    error = caught;
  }
  return { body, error, waited, ended, stopped: stop.mock.calls.length, scanReturned: state.returned };
};

describe('listEnding: the one end of a list', () => {
  it('stops the scan, then releases once, telling whether the list was whole; a later call gets the same promise', async () => {
    const release = vi.fn(async (_whole: boolean) => undefined);
    const ending = listEnding(release);
    const { generator, state } = scan([[order('1')], [order('2')]]);
    ending.scanning(generator);
    await generator.next();
    const first = ending.end(true);
    expect(ending.end()).toBe(first);
    await first;
    expect(state.returned).toBe(true);
    expect(release.mock.calls).toEqual([[true]]);
  });

  it('releases as not whole when called without a word (a failure or a client gone)', async () => {
    const release = vi.fn(async (_whole: boolean) => undefined);
    await listEnding(release).end();
    expect(release.mock.calls).toEqual([[false]]);
  });
});

describe('jsonArray: the Scan pages as one JSON array', () => {
  it('writes every order of every page, skipping empty pages, and ends the list as whole', async () => {
    const read = await readArray([[order('1'), order('2')], [], [order('9223372036854775807')]]);
    expect(read.error).toBeUndefined();
    expect(read.body).toBe(
      '[{"id":1,"petId":9223372036854775807,"quantity":1,"status":"pending"},' +
        '{"id":2,"petId":9223372036854775807,"quantity":1,"status":"pending"},' +
        '{"id":9223372036854775807,"petId":9223372036854775807,"quantity":1,"status":"pending"}]',
    );
    expect(read.ended).toEqual([true]);
    expect(read.stopped).toBe(1);
  });

  it('writes each id also as text, on every page, when the list was asked with stringIds=true', async () => {
    const read = await readArray([[order('1')], [order('-9223372036854775808')]], { stringIds: true });
    expect(read.body).toBe(
      '[{"id":1,"idStr":"1","petId":9223372036854775807,"petIdStr":"9223372036854775807","quantity":1,"status":"pending"},' +
        '{"id":-9223372036854775808,"idStr":"-9223372036854775808","petId":9223372036854775807,"petIdStr":"9223372036854775807","quantity":1,"status":"pending"}]',
    );
  });

  it('writes [] for a store without orders', async () => {
    const read = await readArray([[]]);
    expect(read.body).toBe('[]');
    expect(read.ended).toEqual([true]);
  });

  it('tells the watch each chunk waits (its size in bytes) and then was taken', async () => {
    const read = await readArray([[order('1')], [order('2')]]);
    const chunks = [
      '[',
      '{"id":1,"petId":9223372036854775807,"quantity":1,"status":"pending"}',
      ',{"id":2,"petId":9223372036854775807,"quantity":1,"status":"pending"}',
      ']',
    ];
    expect(read.waited).toEqual([...chunks.flatMap((chunk) => [Buffer.byteLength(chunk), false]), false]);
  });

  it("closes a probe's array after the page that reaches its bound, and stops the scan there", async () => {
    const read = await readArray([[order('1')], [order('2')], [order('3')]], { maxBytes: 2 });
    expect(read.body).toBe('[{"id":1,"petId":9223372036854775807,"quantity":1,"status":"pending"}]');
    expect(read.ended).toEqual([true]);
    expect(read.scanReturned).toBe(true);
  });

  it('fails the stream when a page cannot be read, and ends the list as not whole', async () => {
    const read = await readArray([[order('1')], [order('2')]], { failAfter: 1 });
    expect(read.body).toBe('[{"id":1,"petId":9223372036854775807,"quantity":1,"status":"pending"}');
    expect((read.error as Error).message).toBe('DynamoDB failed mid-list');
    expect(read.ended).toEqual([false]);
    expect(read.stopped).toBe(1);
  });
});

describe('readerWatch: the cuts (fake timers)', () => {
  afterEach(() => vi.useRealTimers());

  /** A watch on a body nobody reads, and the error the body was destroyed with, if any. */
  const watched = (remainingMs = 15 * 60_000, stallSeconds = 30) => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
    const watch = readerWatch({ startedAt: performance.now(), invokedAt: Date.now(), remainingMs, stallSeconds });
    const body = new Readable({ read: () => undefined });
    const destroyed: { error?: unknown } = {};
    body.on('error', (error) => (destroyed.error = error));
    watch.attach(body);
    return { watch, body, destroyed };
  };

  it('cuts a list whose chunk waited the stall window for its client, and not a second before', async () => {
    const { watch, body, destroyed } = watched();
    watch.waiting(100);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(body.destroyed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(body.destroyed).toBe(true);
    expect(destroyed.error).toBeInstanceOf(ClientStalledError);
    expect((destroyed.error as Error).message).toBe('the client took nothing for 30 s');
  });

  it('cuts a client that takes less than the minimum rate over a stall window of waiting', async () => {
    const { watch, body, destroyed } = watched();
    // Half the minimum rate: a window's worth of bytes taken in two windows' time, chunk by chunk.
    const chunk = minBytesPerSecond / 2;
    for (let second = 0; second < 30; second++) {
      watch.waiting(chunk);
      await vi.advanceTimersByTimeAsync(1_000);
      watch.waiting(false);
    }
    expect(body.destroyed).toBe(true);
    // The body's 'error' follows its destroy on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect((destroyed.error as Error).message).toBe(`the client took ${chunk} bytes/s, below ${minBytesPerSecond}`);
  });

  it('lets a client at the minimum rate read on', async () => {
    const { watch, body } = watched();
    for (let second = 0; second < 90; second++) {
      watch.waiting(minBytesPerSecond);
      await vi.advanceTimersByTimeAsync(1_000);
      watch.waiting(false);
    }
    expect(body.destroyed).toBe(false);
    watch.stop();
  });

  it("cuts a list that ran its maximum duration, or the function's remaining time less the release margin", async () => {
    const long = watched();
    await vi.advanceTimersByTimeAsync(maxListMs - 1);
    expect(long.body.destroyed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect((long.destroyed.error as Error).message).toBe(`the list ran ${maxListMs / 1000} s, its limit`);
    vi.useRealTimers();

    const short = watched(releaseMarginMs + 5_000);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(short.destroyed.error).toBeInstanceOf(ClientStalledError);
  });

  it('cuts nothing once stopped', async () => {
    const { watch, body } = watched();
    watch.waiting(100);
    watch.stop();
    await vi.advanceTimersByTimeAsync(maxListMs * 2);
    expect(body.destroyed).toBe(false);
  });
});

describe('listBody and endOfInvocation: every way a list ends reaches its end', () => {
  const contextOf = () => ({ getRemainingTimeInMillis: () => 15 * 60_000 }) as unknown as Context;
  const bodyOf = async (context: Context, release: (whole: boolean) => Promise<void>) => {
    const ending = listEnding(release);
    const { generator, state } = scan([[order('1')], [order('2')]]);
    ending.scanning(generator);
    const first = await generator.next();
    const body = listBody(first, generator, {
      context,
      ending,
      startedAt: performance.now(),
      invokedAt: Date.now(),
      stallSeconds: 30,
      maxBytes: Infinity,
      stringIds: false,
    });
    return { body, state };
  };

  it('a body read to its end releases the list as whole', async () => {
    const release = vi.fn(async (_whole: boolean) => undefined);
    const { body } = await bodyOf(contextOf(), release);
    expect(JSON.parse(await text(body))).toHaveLength(2);
    expect(release.mock.calls).toEqual([[true]]);
  });

  it('a body destroyed before it was read (its client left first) stops the scan and releases the list', async () => {
    const release = vi.fn(async (_whole: boolean) => undefined);
    const { body, state } = await bodyOf(contextOf(), release);
    const closed = new Promise((resolve) => body.once('close', resolve));
    body.destroy();
    await closed;
    await vi.waitFor(() => expect(release.mock.calls).toEqual([[false]]));
    expect(state.returned).toBe(true);
  });

  it("the invocation's end destroys a body nobody piped and waits for its release", async () => {
    const context = contextOf();
    let released = false;
    const { body } = await bodyOf(context, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      released = true;
    });
    await endOfInvocation({ context });
    expect(body.destroyed).toBe(true);
    expect(released).toBe(true);
    // Once: a second end of the same invocation has nothing left to end.
    await endOfInvocation({ context });
  });
});
