import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { authorizationSlots, authorizationTurns, type Standing } from '../../infra/local/address-limits.ts';

/** The turns the local gateway gives each address at the authorizer, on a fake clock: 10 a second, a burst of 2, a second's wait at most. */
describe("the local gateway's turns at the authorizer, per client address", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
  afterEach(() => vi.useRealTimers());

  const turns = (maxWaitMs = 1_000) => authorizationTurns({ rateLimit: 10, burstLimit: 2 }, maxWaitMs);
  const client = () => new EventEmitter();
  /** Requests of `address`, each with its standing, and the order their turns came in (or `none`). */
  const ask = (limits: ReturnType<typeof turns>, address: string, standings: Standing[]) => {
    const order: string[] = [];
    // Each turn is handed back at once: the authorizer answered.
    const asked = standings.map((standing, i) =>
      limits.take(address, standing, client()).then((turn) => {
        turn?.();
        order.push(turn ? `${standing}#${i}` : `none:${standing}#${i}`);
      }),
    );
    return { order, done: Promise.all(asked) };
  };

  it('gives the burst at once, then one turn a tenth of a second', async () => {
    const limits = turns();
    const { order, done } = ask(limits, '127.0.0.1', ['new', 'new', 'new', 'new']);
    await vi.advanceTimersByTimeAsync(0);
    expect(order).toEqual(['new#0', 'new#1']);
    await vi.advanceTimersByTimeAsync(100);
    expect(order).toEqual(['new#0', 'new#1', 'new#2']);
    await vi.advanceTimersByTimeAsync(100);
    await done;
    expect(order).toEqual(['new#0', 'new#1', 'new#2', 'new#3']);
  });

  it('serves a connection that showed a valid key, then a new one, before those refused, whatever came first', async () => {
    const limits = turns();
    // The burst goes to a flood of made-up keys on connections already refused; then more of them wait.
    const flood = ask(limits, '127.0.0.1', ['refused', 'refused', 'refused', 'refused', 'refused']);
    await vi.advanceTimersByTimeAsync(0);
    const honest = ask(limits, '127.0.0.1', ['new', 'keyed']);
    await vi.advanceTimersByTimeAsync(200);
    await honest.done;
    expect(honest.order).toEqual(['keyed#1', 'new#0']);
    expect(flood.order).toEqual(['refused#0', 'refused#1']);
  });

  it('refuses a request that had no turn within its wait, and one whose client left, without holding a turn for it', async () => {
    const limits = turns(1_050);
    const flood = ask(
      limits,
      '127.0.0.1',
      Array.from({ length: 15 }, () => 'refused' as const),
    );
    const leaving = client();
    const left = limits.take('127.0.0.1', 'refused', leaving);
    leaving.emit('close');
    expect(await left).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1_050);
    await flood.done;
    // 2 at once, 10 in the second (the one who left took none); the last three had no turn.
    expect(flood.order.filter((entry) => !entry.startsWith('none')).length).toBe(12);
    expect(flood.order.filter((entry) => entry.startsWith('none')).length).toBe(3);
  });

  it('keeps each address to its own rate: another address is served at once', async () => {
    const limits = turns();
    ask(limits, '127.0.0.2', ['refused', 'refused', 'refused', 'refused']);
    const other = ask(limits, '127.0.0.3', ['new']);
    await vi.advanceTimersByTimeAsync(0);
    await other.done;
    expect(other.order).toEqual(['new#0']);
  });

  it('runs at most a few lookups at once per address, and a few more for all: the next waits for one to end', async () => {
    const limits = authorizationTurns({ rateLimit: 1_000, burstLimit: 1_000 }, 1_000);
    const held = await Promise.all(Array.from({ length: authorizationSlots.perAddress }, () => limits.take('127.0.0.1', 'new', client())));
    let next: (() => void) | undefined;
    void limits.take('127.0.0.1', 'new', client()).then((turn) => (next = turn));
    await vi.advanceTimersByTimeAsync(100);
    expect(next).toBeUndefined();
    held[0]!();
    await vi.advanceTimersByTimeAsync(0);
    expect(next).toBeTypeOf('function');
    // Other addresses share what is left of the sixteen.
    const others = await Promise.all(
      Array.from({ length: authorizationSlots.all - authorizationSlots.perAddress }, (_, i) =>
        limits.take(`127.0.1.${i}`, 'new', client()),
      ),
    );
    expect(others.every((turn) => turn !== undefined)).toBe(true);
    const late = limits.take('127.0.2.1', 'keyed', client());
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await late).toBeUndefined();
  });
});
