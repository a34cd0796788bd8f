/** `npm run load`'s measured runs: the rounds of lists and cancels side by side, and the overload. */
import autocannon from 'autocannon';
import { cancelConnections, key, listConnections, mb, ms, roundSeconds, settings } from './load-settings.ts';
import { memoryOf, type SeedOrder, type Service } from './load-service.ts';

// ----------------------------------------------------------------------------------------
// One round: lists and cancels at once, each route its own autocannon instance
// ----------------------------------------------------------------------------------------

export type Cancel204 = { id: string; at: number };
export type RouteFigures = {
  route: string;
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  errors: number;
};

export const figures = (route: string, result: autocannon.Result): RouteFigures => ({
  route,
  requests: result.requests.total,
  perSecond: result.requests.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([status, { count }]) => [status, count ?? 0])),
  errors: result.errors + result.timeouts,
});

export const runRound = async (
  service: Service,
  orders: readonly SeedOrder[],
  problems: string[],
  cancels204: Cancel204[],
  shape = { listConnections, cancelConnections, seconds: roundSeconds },
) => {
  const headers = { authorization: `Bearer ${key}` };
  const cancelTargets = orders.map((order) => order.id);
  const list = autocannon({
    url: `${service.url}/v1/store/orders`,
    connections: shape.listConnections,
    duration: shape.seconds,
    headers,
    requests: [
      {
        method: 'GET',
        onResponse: (status, body) => {
          // Refused because the stage's lists are all running (as API Gateway answers the list function at its reserved concurrency).
          if (status === 503 && !body.includes('"code":"service_unavailable"'))
            problems.push(`a list answered 503 with ${body.slice(0, 100)}`);
          if (status !== 200) return;
          // Every order, every time, exactly: a list cut short must never pass for a whole one.
          const ids = body.match(/"id":-?\d+/g) ?? [];
          if (!body.endsWith(']') || ids.length !== orders.length) problems.push(`a list held ${ids.length} of ${orders.length} orders`);
        },
      },
    ],
  });
  const cancel = autocannon({
    url: service.url,
    connections: shape.cancelConnections,
    duration: shape.seconds,
    headers,
    requests: [
      {
        method: 'DELETE',
        setupRequest: (request, context) => {
          // Mostly seeded ids (repeats included: cancelling twice must change nothing), some unknown.
          const id =
            Math.random() < 0.05
              ? String(10_000_000 + Math.trunc(Math.random() * 1000))
              : cancelTargets[Math.trunc(Math.random() * cancelTargets.length)]!;
          (context as { id?: string }).id = id;
          return { ...request, path: `/v1/store/orders/${id}` };
        },
        onResponse: (status, _body, context) => {
          if (status === 204) cancels204.push({ id: (context as { id: string }).id, at: Date.now() });
        },
      },
    ],
  });
  const [listResult, cancelResult] = await Promise.all([list, cancel]);
  return [figures('GET /v1/store/orders', listResult), figures('DELETE /v1/store/orders/{orderId}', cancelResult)];
};

/** The rounds, each checked as it ends (statuses, 5xx, errors): a table row per route and round, with the service's memory. */
export const runRounds = async (service: Service, orders: readonly SeedOrder[], problems: string[], cancels204: Cancel204[]) => {
  const rows: string[][] = [];
  for (let round = 1; round <= settings.rounds; round++) {
    const results = await runRound(service, orders, problems, cancels204);
    const memory = await memoryOf(service);
    for (const r of results) {
      rows.push([
        String(round),
        r.route,
        String(r.requests),
        r.perSecond.toFixed(0),
        ms(r.p50),
        ms(r.p99),
        JSON.stringify(r.statuses),
        String(r.errors),
        mb(memory.rss),
        mb(memory.heapUsed),
      ]);
      // A list's 503 is a refusal at the stage's list concurrency (checked above to be service_unavailable), not a failure.
      const isList = r.route.startsWith('GET');
      const fiveXx = Object.entries(r.statuses).filter(([status]) => Number(status) >= 500 && !(isList && status === '503'));
      if (fiveXx.length > 0) problems.push(`round ${round}, ${r.route}: ${JSON.stringify(Object.fromEntries(fiveXx))} 5xx`);
      const allowed = isList ? ['200'] : ['204', '404', '409'];
      const unexpected = Object.keys(r.statuses).filter((status) => !allowed.includes(status) && Number(status) < 500);
      if (unexpected.length > 0) problems.push(`round ${round}, ${r.route}: unexpected status ${unexpected.join(', ')}`);
      if (r.errors > 0) problems.push(`round ${round}, ${r.route}: ${r.errors} connection errors or timeouts`);
    }
  }
  return rows;
};

// ----------------------------------------------------------------------------------------
// Overload: the same clients sending only cancels, then 10 % lists among the cancels
// ----------------------------------------------------------------------------------------

type Kind = 'list' | 'cancel';
type KindFigures = { count: number; statuses: Record<string, number>; latencies: number[] };
export type Overload = { cancelOnly: RouteFigures; mixed: Record<Kind, KindFigures>; refusedLatencies: number[]; seconds: number };

export const percentile = (values: readonly number[], p: number) => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
};

const randomCancelPath = (orders: readonly SeedOrder[]) => {
  const id =
    Math.random() < 0.05 ? String(10_000_000 + Math.trunc(Math.random() * 1000)) : orders[Math.trunc(Math.random() * orders.length)]!.id;
  return { id, path: `/v1/store/orders/${id}` };
};

type OnCancel = (status: number, context: object) => void;

/** What both parts of the overload share: the same keep-alive clients, for the same time. */
const overloadClients = (service: Service) => ({
  url: service.url,
  connections: settings.overloadConnections,
  duration: settings.overloadSeconds,
  headers: { authorization: `Bearer ${key}` },
});

/** Per connection: that many cancels in the overload's time, of random orders. */
const cancelsOnly = (service: Service, orders: readonly SeedOrder[], onCancel: OnCancel) =>
  autocannon({
    ...overloadClients(service),
    requests: [
      {
        method: 'DELETE',
        setupRequest: (request, context) => {
          const { id, path } = randomCancelPath(orders);
          (context as { id?: string }).id = id;
          return { ...request, path };
        },
        onResponse: (status, _body, context) => onCancel(status, context),
      },
    ],
  });

/** The mix: a list instead of a cancel for the overload's share of the requests, each kind's figures apart. */
const mixedLoad = async (service: Service, orders: readonly SeedOrder[], problems: string[], onCancel: OnCancel) => {
  const mixed: Record<Kind, KindFigures> = {
    list: { count: 0, statuses: {}, latencies: [] },
    cancel: { count: 0, statuses: {}, latencies: [] },
  };
  const refusedLatencies: number[] = [];
  type Sent = { id?: string; kind?: Kind; sentAt?: number };
  await autocannon({
    ...overloadClients(service),
    requests: [
      {
        setupRequest: (request, context) => {
          const sent = context as Sent;
          sent.sentAt = performance.now();
          if (Math.random() < settings.overloadListShare) {
            sent.kind = 'list';
            return { ...request, method: 'GET', path: '/v1/store/orders' };
          }
          const { id, path } = randomCancelPath(orders);
          Object.assign(sent, { kind: 'cancel', id });
          return { ...request, method: 'DELETE', path };
        },
        onResponse: (status, body, context) => {
          const sent = context as Sent;
          const figures = mixed[sent.kind!];
          figures.count += 1;
          figures.statuses[status] = (figures.statuses[status] ?? 0) + 1;
          const latency = performance.now() - sent.sentAt!;
          if (sent.kind === 'cancel' || status === 200) figures.latencies.push(latency);
          else refusedLatencies.push(latency);
          if (sent.kind === 'cancel') return onCancel(status, context);
          if (status === 200) {
            const ids = body.match(/"id":-?\d+/g) ?? [];
            if (!body.endsWith(']') || ids.length !== orders.length) problems.push(`a list held ${ids.length} of ${orders.length} orders`);
          } else if (status === 503 || status === 429) {
            // Refused: the stage's list concurrency (503, as API Gateway answers a throttled function) or the key's (429).
            const expected = status === 503 ? 'service_unavailable' : 'too_many_requests';
            if (!body.includes(`"code":"${expected}"`)) problems.push(`a refused list answered ${status} with ${body.slice(0, 100)}`);
          } else problems.push(`a list answered ${status}`);
        },
      },
    ],
  });
  return { mixed, refusedLatencies };
};

/**
 * The issue-20 scenario: `overloadConnections` keep-alive clients send only cancels, then the
 * same clients send lists (`overloadListShare` of their requests) among the cancels. Each request's
 * kind is drawn when it is sent; its latency is measured from then to its last byte.
 */
export const runOverload = async (
  service: Service,
  orders: readonly SeedOrder[],
  problems: string[],
  cancels204: Cancel204[],
): Promise<Overload> => {
  const seconds = settings.overloadSeconds;
  const onCancel: OnCancel = (status, context) => {
    if (status === 204) cancels204.push({ id: (context as { id: string }).id, at: Date.now() });
  };
  const cancelOnly = await cancelsOnly(service, orders, onCancel);
  const { mixed, refusedLatencies } = await mixedLoad(service, orders, problems, onCancel);
  return { cancelOnly: figures('DELETE only', cancelOnly), mixed, refusedLatencies, seconds };
};

/** The overload's figures and what they must show: cancels keep half their rate, no cancel 5xx, refusals quick. */
export const reportOverload = ({ cancelOnly, mixed, refusedLatencies, seconds }: Overload, problems: string[]) => {
  const mixedCancelRate = mixed.cancel.count / seconds;
  const ratio = cancelOnly.perSecond === 0 ? 0 : mixedCancelRate / cancelOnly.perSecond;
  const cancelFiveXx = Object.entries(mixed.cancel.statuses).filter(([status]) => Number(status) >= 500);
  const refusedP99 = percentile(refusedLatencies, 99);
  console.log(
    `\nOverload (${settings.overloadConnections} keep-alive clients, ${seconds} s each):\n` +
      `cancels only: ${cancelOnly.perSecond.toFixed(0)}/s, p50 ${ms(cancelOnly.p50)}, p99 ${ms(cancelOnly.p99)}, ${JSON.stringify(cancelOnly.statuses)}\n` +
      `mixed, cancels: ${mixedCancelRate.toFixed(0)}/s (${(ratio * 100).toFixed(0)} % of cancels only), p50 ${ms(percentile(mixed.cancel.latencies, 50))}, p99 ${ms(percentile(mixed.cancel.latencies, 99))}, ${JSON.stringify(mixed.cancel.statuses)}\n` +
      `mixed, lists: ${mixed.list.count} (${JSON.stringify(mixed.list.statuses)}), answered p50 ${ms(percentile(mixed.list.latencies, 50))}; ` +
      `refused: ${refusedLatencies.length}, p50 ${ms(percentile(refusedLatencies, 50))}, p99 ${ms(refusedP99)}`,
  );
  if (Object.keys(cancelOnly.statuses).some((status) => Number(status) >= 500))
    problems.push(`cancels only: 5xx ${JSON.stringify(cancelOnly.statuses)}`);
  if (cancelFiveXx.length > 0) problems.push(`mixed: cancels answered 5xx ${JSON.stringify(Object.fromEntries(cancelFiveXx))}`);
  if (cancelOnly.errors > 0) problems.push(`cancels only: ${cancelOnly.errors} connection errors or timeouts`);
  if (settings.checkFairness && ratio < 0.5)
    problems.push(`mixed cancels ran at ${(ratio * 100).toFixed(0)} % of their cancel-only rate (at least 50 % expected)`);
  if (settings.checkFairness && refusedP99 >= 1000) problems.push(`refused lists waited up to ${refusedP99} ms (p99) for their refusal`);
};
