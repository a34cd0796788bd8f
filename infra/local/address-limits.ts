/**
 * The local gateway's stand-in for the stage's AWS WAF rate rule (docs/decisions/0935-the-local-gateway-plays-the-firewall.md):
 * the authorizations of keys it has not cached (each a lookup in DynamoDB Local) per client address,
 * at a rate and burst, a few at once per address and a few more for all. A request over them waits
 * for a turn, and gets none after `maxWaitMs` (429, as the firewall answers). Turns go first to connections that have shown a valid key, then
 * to connections that have not been refused, then to those refused (by the authorizer, or here): a flood of made-up keys on
 * keep-alive connections waits behind a client presenting a real key for the first time, from the
 * same address included. Locally every client is 127.0.0.1 and the developer's own tools run
 * unlimited: a key the gateway has cached costs no turn (deployed, AWS WAF counts every request).
 */
import type { Throttling } from '../tiers.ts';

/** What a connection has shown so far: a valid key, nothing yet, or a refusal (of the authorizer, or of its turn here). */
export type Standing = 'keyed' | 'new' | 'refused';
/** The connection a request came on: its standing, and how to mark it refused when the request gets no turn. */
export type Asker = { readonly standing: Standing; refuse(): void };
const rank: Record<Standing, number> = { keyed: 0, new: 1, refused: 2 };

type Waiter = { readonly rank: number; readonly settle: (turn: Release | undefined) => void };
type Gone = { once(event: 'close', listener: () => void): unknown };
/** Ends a turn: its slot is free for the next waiter. */
export type Release = () => void;

/**
 * Turns at the authorizer: at most `slots` at once, and with a bucket at most its rate and burst;
 * the waiters served best standing first, then keyed and refused ones in arrival order, new ones
 * the newest first.
 */
class Gate {
  private tokens: number;
  private updated: number;
  private running = 0;
  private readonly queue: Waiter[] = [];
  private wake?: NodeJS.Timeout;
  private readonly slots: number;
  private readonly bucket: Throttling | undefined;
  private readonly now: () => number;

  constructor(slots: number, bucket: Throttling | undefined, now: () => number) {
    this.slots = slots;
    this.bucket = bucket;
    this.now = now;
    this.tokens = bucket?.burstLimit ?? 0;
    this.updated = now();
  }

  /** Whether nothing runs or waits and the bucket is full again: the gate can be forgotten. */
  get idle(): boolean {
    this.refill();
    return this.running === 0 && this.queue.length === 0 && (this.bucket === undefined || this.tokens >= this.bucket.burstLimit);
  }

  /** A turn before `deadline` (performance.now() time), after the waiters of the same standing or better; undefined without one or once `gone` closes. */
  acquire(standing: Standing, gone: Gone, deadline: number): Promise<Release | undefined> {
    if (this.queue.length === 0 && this.ready(rank[standing])) return Promise.resolve(this.grant());
    return new Promise((resolve) => {
      let settled = false;
      const waiter: Waiter = {
        rank: rank[standing],
        settle: (turn) => {
          // A turn given to a waiter that has already gone is handed back.
          if (settled) return turn?.();
          settled = true;
          clearTimeout(timer);
          const index = this.queue.indexOf(waiter);
          if (index >= 0) this.queue.splice(index, 1);
          resolve(turn);
        },
      };
      const timer = setTimeout(() => waiter.settle(undefined), Math.max(0, deadline - this.now()));
      gone.once('close', () => waiter.settle(undefined));
      // Keyed and refused in arrival order; a new connection before the new ones already waiting: a
      // flood's connections are all new at first, and a key shown meanwhile must not queue behind them.
      const at = this.queue.findIndex((other) => (waiter.rank === rank.new ? other.rank >= waiter.rank : other.rank > waiter.rank));
      this.queue.splice(at < 0 ? this.queue.length : at, 0, waiter);
      this.serve();
    });
  }

  private refill() {
    if (this.bucket === undefined) return;
    const at = this.now();
    this.tokens = Math.min(this.bucket.burstLimit, this.tokens + ((at - this.updated) / 1000) * this.bucket.rateLimit);
    this.updated = at;
  }

  /**
   * Whether a turn is free for a request of this rank. A connection already refused never takes the
   * last of the slots or tokens: a key shown for the first time finds one free whatever a flood of
   * made-up keys holds, without waiting for one of its lookups to end.
   */
  private ready(waiterRank: number): boolean {
    this.refill();
    const kept = waiterRank === rank.refused ? keptFromRefused : { slots: 0, tokens: 0 };
    return this.running < this.slots - kept.slots && (this.bucket === undefined || this.tokens >= 1 + kept.tokens);
  }

  private grant(): Release {
    this.running += 1;
    if (this.bucket !== undefined) this.tokens -= 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= 1;
      this.serve();
    };
  }

  /** Gives waiters their turns while slots and tokens allow; wakes when the bucket's next token is due. */
  private serve() {
    // Computed afresh: a better waiter than the one it was set for may have come.
    clearTimeout(this.wake);
    this.wake = undefined;
    while (this.queue.length > 0 && this.ready(this.queue[0]!.rank)) this.queue[0]!.settle(this.grant());
    if (this.queue.length === 0 || this.bucket === undefined) return;
    const needed = 1 + (this.queue[0]!.rank === rank.refused ? keptFromRefused.tokens : 0);
    if (this.tokens >= needed) return; // a slot, not a token, is missing: a release serves again
    const delay = ((needed - this.tokens) / this.bucket.rateLimit) * 1000;
    this.wake = setTimeout(() => this.serve(), delay);
  }
}

export type AuthorizationTurns = {
  /**
   * A turn at the authorizer for a request of `address` (release it once the authorizer answers),
   * or undefined when it had none within the wait, or `gone` closed first: its client left. A
   * connection turned away ranks refused from then on: its retries must not go before a key shown
   * for the first time, as they would as new ones (served newest first).
   */
  take(address: string, asker: Asker, gone: Gone): Promise<Release | undefined>;
};

/**
 * Lookups at once, per address and for all: DynamoDB Local serves a laptop, not a flood. A hundred
 * lookups of made-up keys at once made a real key's own wait past its deadline (500); four per
 * address and sixteen in all keep each lookup short.
 */
export const authorizationSlots = { perAddress: 4, all: 16 } as const;

/** What a connection already refused leaves to others: one slot of each gate, and ten of an address's tokens. */
const keptFromRefused = { slots: 1, tokens: 10 };

/** Addresses beyond this many are forgotten once idle and refilled, so that many addresses cost no memory. */
const keptAddresses = 10_000;

export const authorizationTurns = (
  limits: Throttling,
  maxWaitMs = 1_000,
  now: () => number = () => performance.now(),
): AuthorizationTurns => {
  const addresses = new Map<string, Gate>();
  const all = new Gate(authorizationSlots.all, undefined, now);
  return {
    take: async (address, { standing, refuse }, gone) => {
      let gate = addresses.get(address);
      if (gate === undefined) {
        if (addresses.size >= keptAddresses) for (const [known, state] of addresses) if (state.idle) addresses.delete(known);
        addresses.set(address, (gate = new Gate(authorizationSlots.perAddress, limits, now)));
      }
      const deadline = now() + maxWaitMs;
      const own = await gate.acquire(standing, gone, deadline);
      const shared = own && (await all.acquire(standing, gone, deadline));
      if (own === undefined || shared === undefined) {
        own?.();
        refuse();
        return undefined;
      }
      return () => {
        shared();
        own();
      };
    },
  };
};
