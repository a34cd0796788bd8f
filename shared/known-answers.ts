/**
 * The known-answer suite: what every runner of the service's probes shares. Each function's
 * checks live in its folder (`functions/<function>/known-answers.ts`, a `Suite`); the registry
 * collects them into the pre-traffic hook's and the synthetic client's bundles and into
 * `npm run smoke` (infra/cdk/release-checks.ts, infra/registry.ts). A check asks through a
 * `Prober` (the hook invokes the new versions directly; the smoke check and the synthetic client
 * speak HTTP to a stage) and proves each documented answer by what it reads back, never by a
 * status alone. One line per check: PASS, FAIL, BUSY (refused as busy until its time ran out),
 * SKIP (does not apply here, with why) or SETUP (the prober could not set it up).
 */
import { randomBytes } from 'node:crypto';
import { type Answer, fail, requestIdOf, ServiceBusy, SetupFailed, Skipped } from './answers.ts';
import { resourcePath, type Route } from './routes.ts';

/** One request of a check: method, full path (`/v1/store/orders/1`), query parameters, gzip asked for. */
export type ProbeRequest = {
  readonly method: Route['method'];
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly gzip?: boolean;
};

/** How one request is asked: `handBack` answers go back to the check instead of being waited out as busy. */
export type AskOptions = { readonly handBack?: (answer: Answer) => boolean };

/** What the authorizer answered a key: its own answer (the hook invokes it) or the gateway's (over HTTP). */
export type Authorization =
  | { readonly via: 'authorizer'; readonly error: string | undefined; readonly payload: unknown; readonly usageIdentifierKey: string }
  | { readonly via: 'gateway'; readonly answer: Answer };

/** A probe order as stored (read back consistently): its status and cancelledAt, or undefined when it is gone. */
export type StoredProbeOrder = { readonly status?: string | undefined; readonly cancelledAt?: string | undefined };

/** The prober's own orders, in the ids reserved for the probes (shared/probes.ts): the only items a check writes. */
export type ProbeOrderStore = {
  /** Writes an order of the prober's own with this status; its id. A refusal (IAM, throttling) is SetupFailed. */
  readonly put: (status: 'pending' | 'shipped') => Promise<string>;
  readonly read: (id: string) => Promise<StoredProbeOrder | undefined>;
  /** Deletes it (never throws: a leftover expires and is taken over). */
  readonly remove: (id: string) => Promise<void>;
};

/** Whether a filtered v2 page can be answered 200: the status index ready, not yet, unknown (HTTP), or not asked for on this stage. */
export type StatusIndexState = 'ready' | 'not ready' | 'unknown' | 'off';

/** What a runner gives the checks. */
export type Prober = {
  /** A request with the prober's key, as API Gateway would hand it to the operation; documented refusals waited out. */
  readonly ask: (request: ProbeRequest, options?: AskOptions) => Promise<Answer>;
  readonly authorize: (key: 'own' | 'wrong') => Promise<Authorization>;
  /** Absent where the runner may write no order (a deployed stage's smoke check): such checks are SKIP, with `noOrders`. */
  readonly orders?: ProbeOrderStore;
  readonly noOrders?: string;
  /** How a v1 list is read: how many times in a row, and whether it must end at the probes' bound (a canary-tier key). */
  readonly list: { readonly reads: number; readonly bounded: boolean };
  readonly statusIndex: () => Promise<StatusIndexState>;
  /** The orders table's item count, where the runner can read it. */
  readonly itemCount?: () => Promise<number>;
};

/** One known answer: its name, the most requests with the prober's key one right run of it sends, and its run. */
export type KnownAnswer = { readonly name: string; readonly requests: number; readonly run: (probe: Prober) => Promise<string> };

/** A function's known answers (`functions/<function>/known-answers.ts` exports it as `knownAnswers`). */
export type Suite = {
  /** The operation's route: where the hook sends a request. Absent: the authorizer's suite. */
  readonly route?: Route;
  /**
   * A request to the operation that changes nothing, and the status it is answered: the hook asks
   * it of the live version beside a busy new one; over HTTP the authorizer's checks send it (any
   * operation's: what it answers past the authorizer is the operation's checks' to judge).
   */
  readonly harmless?: { readonly request: ProbeRequest; readonly status: number };
  readonly checks: readonly KnownAnswer[];
};

export type RunOutcome = {
  readonly lines: string[];
  readonly failed: string[];
  readonly busy: string[];
  readonly skipped: string[];
  readonly setup: string[];
};

/** A check stopped at, or not started by, the run's deadline. */
const deadlinePassed = () => Object.assign(new Error('the deadline passed'), { name: 'TimeoutError' });

/** `work`, or a TimeoutError shortly after the deadline: a call without an abort signal of its own cannot outlast it either. */
export const withinDeadline = <T>(deadline: number, work: Promise<T>): Promise<T> => {
  if (deadline === Infinity) return work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(deadlinePassed()), Math.max(1, deadline + 2_000 - Date.now()));
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
};

const isDeadline = (error: unknown) => error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

type Verdict = 'PASS' | 'FAIL' | 'BUSY' | 'SKIP' | 'SETUP';

/** A check's verdict: a deadline that a busy check before it used up is busy; otherwise the service was slow, a failure. */
const verdictOf = (error: unknown, busyBefore: boolean, started: boolean): { verdict: Verdict; reason: string } => {
  if (error instanceof ServiceBusy) return { verdict: 'BUSY', reason: error.message };
  if (error instanceof Skipped) return { verdict: 'SKIP', reason: error.message };
  if (error instanceof SetupFailed) return { verdict: 'SETUP', reason: error.message };
  if (!isDeadline(error)) return { verdict: 'FAIL', reason: reasonOf(error) };
  if (busyBefore)
    return {
      verdict: 'BUSY',
      reason: `${started ? 'stopped at' : 'not started by'} the deadline: the checks' time went to a busy service`,
    };
  return { verdict: 'FAIL', reason: started ? 'no answer before the deadline' : 'not started: the checks reached their deadline' };
};

/** The prober, each answer held to what every answer carries (X-Request-Id) before a check reads it. */
const everyAnswerChecked = (probe: Prober): Prober => ({
  ...probe,
  ask: async (request, options) => {
    const answer = await probe.ask(request, options);
    requestIdOf(answer);
    return answer;
  },
});

/**
 * Every check of every suite in turn, one line each; none starts past `deadline`, none runs more
 * than a moment past it. `out` sees each line as it is decided.
 */
export const runSuites = async (
  suites: readonly Suite[],
  prober: Prober,
  { deadline = Infinity, out = () => undefined }: { deadline?: number; out?: (line: string) => void } = {},
): Promise<RunOutcome> => {
  const outcome: RunOutcome = { lines: [], failed: [], busy: [], skipped: [], setup: [] };
  const probe = everyAnswerChecked(prober);
  const lists: Record<Verdict, string[] | undefined> = {
    PASS: undefined,
    FAIL: outcome.failed,
    BUSY: outcome.busy,
    SKIP: outcome.skipped,
    SETUP: outcome.setup,
  };
  for (const { name, run } of suites.flatMap((suite) => suite.checks)) {
    const started = Date.now() < deadline;
    let line: string;
    try {
      if (!started) throw deadlinePassed();
      line = `PASS  ${name}: ${await withinDeadline(deadline, run(probe))}`;
    } catch (error) {
      const { verdict, reason } = verdictOf(error, outcome.busy.length > 0, started);
      lists[verdict]!.push(name);
      line = `${verdict.padEnd(5)} ${name}: ${reason}`;
    }
    outcome.lines.push(line);
    out(line);
  }
  return outcome;
};

/** The run in one line: how many checks passed, failed, were busy, skipped or not set up. */
export const summaryOf = ({ lines, failed, busy, skipped, setup }: RunOutcome): string => {
  const apart = [
    busy.length > 0 ? `${busy.length} busy (refused with Retry-After until the run's time ran out)` : '',
    setup.length > 0 ? `${setup.length} not set up (${setup.join(', ')})` : '',
    skipped.length > 0 ? `${skipped.length} skipped` : '',
  ].filter(Boolean);
  const passed = lines.length - failed.length - busy.length - skipped.length - setup.length;
  if (failed.length > 0)
    return `${failed.length} of ${lines.length} checks FAILED: ${failed.join(', ')}${apart.length ? `; ${apart.join(', ')}` : ''}.`;
  if (apart.length > 0) return `${passed} of ${lines.length} checks passed, ${apart.join(', ')}.`;
  return `All ${lines.length} checks passed.`;
};

/** A check that cannot apply to this runner: SKIP, with `reason`. */
export const skip = (reason: string): never => {
  throw new Skipped(reason);
};

/** An order as a line shows it, cut to 200 characters. */
export const shown = (value: unknown) => JSON.stringify(value ?? null).slice(0, 200);

/** The full path of `route` with its path parameters filled in, in order. */
export const pathOf = (route: Pick<Route, 'path' | 'apiVersion'>, ...parameters: string[]): string => {
  let at = 0;
  return resourcePath(route).replace(/\{[^/}]+\}/g, () => encodeURIComponent(parameters[at++] ?? fail('a path parameter is missing')));
};

/**
 * A key no one holds, made of fresh random characters: only the key's prefix (`so_live_`, public,
 * in every key of the stage) is kept, so that the authorizer reaches its lookup; no secret
 * character of the prober's key travels in a request meant to fail.
 */
export const wrongKeyLike = (key: string): string => {
  const prefix = /^[a-z]+_[a-z]+_/.exec(key)?.[0] ?? '';
  const length = Math.max(key.length, prefix.length + 32);
  return `${prefix}${randomBytes(length)
    .toString('hex')
    .slice(0, length - prefix.length)}`;
};
