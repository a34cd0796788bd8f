import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { authorizationSlots, authorizationTurns, type Standing } from '../../infra/local/address-limits.ts';

/**
 * The turns the local gateway gives each address at the authorizer, on a fake clock: 10 a second, a
 * burst of 12 (of which a connection already refused leaves 10 to the others), a second's wait at most.
 */
describe("the local gateway's turns at the authorizer, per client address", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
  afterEach(() => vi.useRealTimers());

  const turns = (maxWaitMs = 1_000) => authorizationTurns({ rateLimit: 10, burstLimit: 12 }, maxWaitMs);
  const client = () => new EventEmitter();
  /** Requests of `address`, each with its standing, and the order their turns came in (`none:` without one). */
  const ask = (limits: ReturnType<typeof turns>, address: string, standings: Standing[], hold = false) => {
    const order: string[] = [];
    const held: (() => void)[] = [];
    const asked = standings.map((standing, i) =>
      limits.take(address, { standing, refuse: () => undefined }, client()).then((turn) => {
        // Handed back at once (the authorizer answered), unless held.
        if (turn !== undefined && hold) held.push(turn);
        else turn?.();
        order.push(turn ? `${standing}#${i}` : `none:${standing}#${i}`);
      }),
    );
    return { order, held, done: Promise.all(asked) };
  };
  /** Every turn of 127.0.0.1's burst (12) taken for now. */
  const spendTheBurst = (limits: ReturnType<typeof turns>) =>
    ask(
      limits,
      '127.0.0.1',
      Array.from({ length: 12 }, () => 'new' as const),
    );

  it('gives the burst at once, then one turn a tenth of a second', async () => {
    const limits = turns();
    const { order, done } = ask(
      limits,
      '127.0.0.1',
      Array.from({ length: 14 }, () => 'new' as const),
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(order).toHaveLength(12);
    await vi.advanceTimersByTimeAsync(100);
    expect(order).toHaveLength(13);
    await vi.advanceTimersByTimeAsync(100);
    await done;
    expect(order).toHaveLength(14);
  });

  it('never lets a connection already refused take the last turns: a key shown for the first time has one at once', async () => {
    const limits = turns();
    // A flood of made-up keys on connections already refused: two turns (12 less the 10 kept), then nothing.
    const flood = ask(
      limits,
      '127.0.0.1',
      Array.from({ length: 5 }, () => 'refused' as const),
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(flood.order).toEqual(['refused#0', 'refused#1']);
    const honest = ask(limits, '127.0.0.1', ['new', 'keyed']);
    await vi.advanceTimersByTimeAsync(0);
    await honest.done;
    expect(honest.order.sort()).toEqual(['keyed#1', 'new#0']);
  });

  it('serves a connection that showed a valid key, then a new one, before those refused, whatever came first', async () => {
    const limits = turns();
    spendTheBurst(limits);
    await vi.advanceTimersByTimeAsync(0);
    const flood = ask(limits, '127.0.0.1', ['refused', 'refused']);
    const honest = ask(limits, '127.0.0.1', ['new', 'keyed']);
    await vi.advanceTimersByTimeAsync(250);
    await honest.done;
    expect(honest.order).toEqual(['keyed#1', 'new#0']);
    expect(flood.order).toEqual([]);
  });

  it('serves the newest of the new connections first: a key shown while a flood’s connections are new does not queue behind them', async () => {
    const limits = turns();
    spendTheBurst(limits);
    await vi.advanceTimersByTimeAsync(0);
    const flood = ask(
      limits,
      '127.0.0.1',
      Array.from({ length: 8 }, () => 'new' as const),
    );
    await vi.advanceTimersByTimeAsync(0);
    const honest = ask(limits, '127.0.0.1', ['new']);
    await vi.advanceTimersByTimeAsync(150);
    await honest.done;
    expect(honest.order).toEqual(['new#0']);
    expect(flood.order).toEqual([]);
  });

  it('ranks a connection turned away as refused: its retry leaves the next turn to a key shown for the first time', async () => {
    const limits = turns();
    // The burst spent, and a connection of made-up keys turned away after its second's wait.
    spendTheBurst(limits);
    const flood = { standing: 'new' as Standing };
    // Each request of the connection asks with the standing it has then.
    const connection = () => ({ standing: flood.standing, refuse: () => (flood.standing = 'refused') });
    const turnedAway = limits.take('127.0.0.1', connection(), client());
    // Newer requests, served first, take the second's ten turns.
    const waiting = ask(
      limits,
      '127.0.0.1',
      Array.from({ length: 20 }, () => 'new' as const),
    );
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await turnedAway).toBeUndefined();
    expect(flood.standing).toBe('refused');
    await waiting.done;
    // A fresh key, then the flood's retry on that connection (newer): the next turn is the fresh key's alone.
    const order: string[] = [];
    const asked = (name: string, turn: Promise<(() => void) | undefined>) =>
      turn.then((release) => {
        release?.();
        order.push(release ? name : `none:${name}`);
      });
    const fresh = asked('fresh key', limits.take('127.0.0.1', { standing: 'new', refuse: () => undefined }, client()));
    const retry = asked('retry', limits.take('127.0.0.1', connection(), client()));
    await vi.advanceTimersByTimeAsync(100);
    expect(order).toEqual(['fresh key']);
    await vi.advanceTimersByTimeAsync(1_000);
    await Promise.all([fresh, retry]);
  });

  it('refuses a request that had no turn within its wait, and one whose client left, without holding a turn for it', async () => {
    const limits = turns(1_050);
    const flood = ask(
      limits,
      '127.0.0.1',
      Array.from({ length: 25 }, () => 'new' as const),
    );
    const leaving = client();
    const left = limits.take('127.0.0.1', { standing: 'new', refuse: () => undefined }, leaving);
    leaving.emit('close');
    expect(await left).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1_050);
    await flood.done;
    // 12 at once, 10 in the second (the one who left took none); the last three had no turn.
    expect(flood.order.filter((entry) => !entry.startsWith('none')).length).toBe(22);
    expect(flood.order.filter((entry) => entry.startsWith('none')).length).toBe(3);
  });

  it('keeps each address to its own rate: another address is served at once', async () => {
    const limits = turns();
    ask(
      limits,
      '127.0.0.2',
      Array.from({ length: 20 }, () => 'new' as const),
    );
    const other = ask(limits, '127.0.0.3', ['new']);
    await vi.advanceTimersByTimeAsync(0);
    await other.done;
    expect(other.order).toEqual(['new#0']);
  });

  it('runs at most a few lookups at once per address, and a few more for all: the next waits for one to end', async () => {
    const limits = authorizationTurns({ rateLimit: 1_000, burstLimit: 1_000 }, 1_000);
    const held = ask(
      limits,
      '127.0.0.1',
      Array.from({ length: authorizationSlots.perAddress }, () => 'new' as const),
      true,
    );
    await vi.advanceTimersByTimeAsync(0);
    const next = ask(limits, '127.0.0.1', ['keyed']);
    await vi.advanceTimersByTimeAsync(100);
    expect(next.order).toEqual([]);
    held.held[0]!();
    await vi.advanceTimersByTimeAsync(0);
    expect(next.order).toEqual(['keyed#0']);
    // Other addresses share what is left of the sixteen: three are held.
    const many = Array.from({ length: 4 }, (_, i) => ask(limits, `127.0.1.${i}`, ['new', 'new', 'new', 'new'], true));
    await vi.advanceTimersByTimeAsync(0);
    expect(many.flatMap((of) => of.order)).toHaveLength(authorizationSlots.all - (authorizationSlots.perAddress - 1));
  });
});
