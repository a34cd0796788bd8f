/**
 * The known-answer suite over HTTP (shared/known-answers.ts): what `npm run smoke`
 * (infra/ops/smoke.ts) runs from a shell and the synthetic client (./handler.ts) every minute
 * against a stage's public URL. Each request goes over the wire as a client sends it, with the
 * prober's key and a timeout; its answer is read as the client would (gzip undone), every integer
 * kept exact, the v1 list read up to a bound. A documented refusal (429, or 503 with `Retry-After`)
 * is waited out as told, then BUSY. Beside the operations' suites the runner checks the gateway's
 * own answer to an unknown route and, when asked, cancels one order the operator names.
 */
import { type Answer, expectEmpty, expectError, fail, ServiceBusy } from '../../shared/answers.ts';
import {
  type AskOptions,
  type Prober,
  type ProbeRequest,
  type RunOutcome,
  runSuites,
  type Suite,
  summaryOf,
  wrongKeyLike,
} from '../../shared/known-answers.ts';
import { probeOrderStore, type ProbeOrders } from '../../shared/probe-writes.ts';
import { routeMatches } from '../../shared/routes.ts';

/** What to check: the stage's base URL (…/v1), the key, and the limits of each request. */
export type SmokeOptions = {
  baseUrl: string;
  key: string;
  /** An order the operator names to cancel (it must be pending or cancelled). */
  cancel?: string;
  /** The most any one request may take, in milliseconds. */
  timeoutMs: number;
  /** Read about this many bytes of each v1 list, then stop reading (`--list-bytes`; the synthetic client's bound). */
  listBytes?: number;
  /** The key is a probe's (canary tier): a list the function does not end at the probes' bound fails. */
  listBounded?: boolean;
  /** Whether to ask for a filtered v2 page (`?status=pending`; default true): false where the status index is not ACTIVE. */
  statusFilter?: boolean;
  /** `Date.now()` by which the run must end: no busy wait and no check goes past it (default: none). */
  deadline?: number;
  /** The prober's own orders (pending and shipped ones, cancelled through the API); absent: those checks are SKIP, with `noOrders`. */
  probeOrders?: ProbeOrders;
  noOrders?: string;
  /** The orders table's item count, where the runner can read it. */
  itemCount?: () => Promise<number>;
};

/** What a run found. */
export type SmokeOutcome = { readonly failed: number; readonly busy: number; readonly setup: number; readonly outcome: RunOutcome };

/** A single `Retry-After` longer than this is not waited for: the check is busy at once. */
export const longestBusyWaitMs = 10_000;
/** Busy answers one request waits out at most, whatever its time. */
export const mostBusyTries = 5;
/** A body other than a list's is read up to this much: an answer that goes on is no answer the API documents. */
const answerCapBytes = 1024 * 1024;

/** The answer's body, read up to `capBytes` (then `cut`), gzip undone by fetch as for any client. */
const readBody = async (response: Response, capBytes: number) => {
  const decoder = new TextDecoder();
  let body = '';
  let bytes = 0;
  let cut = false;
  const reader = response.body?.getReader();
  for (let chunk = await reader?.read(); chunk !== undefined && !chunk.done; chunk = await reader!.read()) {
    bytes += chunk.value.byteLength;
    body += decoder.decode(chunk.value, { stream: true });
    if (bytes >= capBytes) {
      cut = true;
      await reader!.cancel();
      break;
    }
  }
  return { body: body + decoder.decode(), cut };
};

/** One request over the wire with `key`, its answer read up to `capBytes`; no answer in time is a failure. */
const send = async (options: SmokeOptions, request: ProbeRequest, key: string, capBytes: number): Promise<Answer> => {
  const url = new URL(`${options.baseUrl.replace(/\/v1$/, '')}${request.path}`);
  for (const [name, value] of Object.entries(request.query ?? {})) url.searchParams.set(name, value);
  const headers = {
    Authorization: `Bearer ${key}`,
    Accept: 'application/json',
    'Accept-Encoding': request.gzip === true ? 'gzip' : 'identity',
  };
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: request.method,
      headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const firstByteMs = performance.now() - started;
    const { body, cut } = await readBody(response, capBytes);
    return { status: response.status, headers: response.headers, body, firstByteMs, ...(cut ? { cut } : {}) };
  } catch (error) {
    if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
      fail(`no answer within ${options.timeoutMs} ms`);
    return fail(
      `no answer: ${error instanceof Error ? (((error.cause as Error | undefined)?.message ?? error.message) as string) : String(error)}`,
    );
  }
};

/** The Error record's code of an answer, where it has one. */
const codeOf = (answer: Answer) => {
  try {
    return (JSON.parse(answer.body) as { code?: unknown }).code;
  } catch {
    return undefined;
  }
};

/** The seconds of a `Retry-After` given in seconds, or undefined. */
const retryAfterOf = (answer: Answer) => {
  const text = answer.headers.get('retry-after');
  return text !== null && /^\d+$/.test(text) ? Number(text) : undefined;
};

/**
 * A 429 that is the key's daily quota spent: one without `Retry-After` (the gateway's answers to a
 * rate, a burst or full list slots all say `Retry-After: 1`) or with one longer than the longest busy
 * wait (the quota's, counting to 00:00 UTC). Not load: a prober's tier is sized for its worst day
 * (test/unit/canary-quota.test.ts), so it fails the check instead of blinding the probe until midnight.
 */
const spentQuota = (answer: Answer) => {
  const seconds = retryAfterOf(answer);
  return answer.status === 429 && (seconds === undefined || seconds * 1000 > longestBusyWaitMs);
};

/**
 * `call` until its answer is not a documented refusal (a 429 of a rate or a burst, a 503 with
 * `Retry-After`), waiting as told while the run's time allows; then BUSY. `handBack` answers are the check's.
 */
const whileBusy = async (options: SmokeOptions, call: () => Promise<Answer>, handBack?: AskOptions['handBack']): Promise<Answer> => {
  for (let tries = 1; ; tries++) {
    const answer = await call();
    if (handBack?.(answer) === true) return answer;
    const seconds = retryAfterOf(answer);
    if (answer.status !== 429 && !(answer.status === 503 && seconds !== undefined)) return answer;
    if (spentQuota(answer))
      fail(`429, Retry-After ${seconds ?? 'none'}: the key's daily quota is spent, a configuration error of its tier, not load`);
    const waitMs = (seconds ?? 1) * 1000 + 100;
    const code = codeOf(answer);
    const said = `${answer.status}${typeof code === 'string' ? ` ${code}` : ''}, Retry-After ${seconds ?? 'none'}`;
    if (tries === mostBusyTries || waitMs > longestBusyWaitMs || Date.now() + waitMs + options.timeoutMs > (options.deadline ?? Infinity))
      throw new ServiceBusy(`${said} (${tries} ${tries === 1 ? 'try' : 'tries'}), past this run's time`);
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
};

/** The HTTP prober over `suites`, with `out` for what the checks do not own (a probe order left behind). */
const httpProber = (options: SmokeOptions, suites: readonly Suite[], out: (line: string) => void): Prober => {
  const isList = (request: ProbeRequest) =>
    suites.some(({ route }) => route?.streaming === true && routeMatches(route, request.method, request.path));
  const capOf = (request: ProbeRequest) => (isList(request) ? (options.listBytes ?? Infinity) : answerCapBytes);
  const asked = (request: ProbeRequest, key: string, handBack?: AskOptions['handBack']) =>
    whileBusy(options, () => send(options, request, key, capOf(request)), handBack);
  return {
    ask: (request, askOptions) => asked(request, options.key, askOptions?.handBack),
    authorize: async (key) => {
      const harmless = suites.find((suite) => suite.harmless !== undefined)?.harmless;
      if (harmless === undefined) return fail('no operation has a request that changes nothing, to send past the authorizer');
      const answer = await asked(harmless.request, key === 'own' ? options.key : wrongKeyLike(options.key));
      return { via: 'gateway', answer };
    },
    ...(options.probeOrders === undefined ? {} : { orders: probeOrderStore(options.probeOrders, out) }),
    ...(options.noOrders === undefined ? {} : { noOrders: options.noOrders }),
    list: { reads: 1, bounded: options.listBounded ?? false },
    statusIndex: async () => (options.statusFilter === false ? 'off' : 'unknown'),
    ...(options.itemCount === undefined ? {} : { itemCount: options.itemCount }),
  };
};

/** The runner's own checks: the gateway's answer to an unknown route, and the cancel the operator asked for. */
const runnerChecks = (options: SmokeOptions): Suite => ({
  checks: [
    {
      name: 'unknown route',
      requests: 1,
      run: async (probe) => expectError(await probe.ask({ method: 'GET', path: '/v1/smoke/no-such-route' }), 404, 'route_not_found'),
    },
    ...(options.cancel === undefined
      ? []
      : [
          {
            name: `cancel order ${options.cancel}`,
            requests: 1,
            run: async (probe: Prober) =>
              expectEmpty(await probe.ask({ method: 'DELETE', path: `/v1/store/orders/${options.cancel}` }), 204),
          },
        ]),
  ],
});

/**
 * The requests one run sends with the prober's key: when every answer is right, and at most, when
 * every request is refused as busy until its last try. The synthetic client's tier must hold the
 * latter for every run of a day (test/unit/canary-quota.test.ts); test/http/canary-quota.test.ts
 * counts the former on the wire.
 */
export const keyedRequestsPerRun = (options: Pick<SmokeOptions, 'cancel'>, suites: readonly Suite[]) => {
  const right = [...suites, runnerChecks({ baseUrl: '', key: '', timeoutMs: 0, ...options })]
    .flatMap((suite) => suite.checks)
    .reduce((sum, { requests }) => sum + requests, 0);
  return { right, worstCase: right * mostBusyTries };
};

/** What the run writes, in its first line. */
const writesOf = (options: SmokeOptions) =>
  [
    options.probeOrders === undefined ? undefined : 'orders of its own, in the reserved probe ids',
    options.cancel === undefined ? undefined : `order ${options.cancel}, which it cancels`,
  ]
    .filter(Boolean)
    .join(' and ') || 'nothing';

/** Runs every check of `suites` and the runner's own, one line each and a summary; what failed, was busy or was not set up. */
export const smoke = async (
  options: SmokeOptions,
  suites: readonly Suite[],
  out: (line: string) => void = console.log,
): Promise<SmokeOutcome> => {
  out(`Smoke test of ${options.baseUrl} (writes ${writesOf(options)})`);
  const all = [...suites, runnerChecks(options)];
  const outcome = await runSuites(all, httpProber(options, all, out), { deadline: options.deadline ?? Infinity, out });
  out(summaryOf(outcome));
  return { failed: outcome.failed.length, busy: outcome.busy.length, setup: outcome.setup.length, outcome };
};
