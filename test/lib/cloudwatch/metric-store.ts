/**
 * Metric datapoints as CloudWatch keeps them for the alarm evaluator (./alarm-evaluator.ts): each
 * metric (namespace, name and its exact set of dimensions: a metric with one more dimension is
 * another metric) holds, per minute, the values published in it, each with how many times it was
 * published. Statistics are computed over the values of a period as CloudWatch's statistics
 * definitions say (Sum, SampleCount, Average, Minimum, Maximum, pNN, PR(lo:hi)).
 */
export type MetricId = { readonly namespace: string; readonly name: string; readonly dimensions: Readonly<Record<string, string>> };

/** One published value, `count` times (a request kind repeated within a minute). */
export type Datum = MetricId & { readonly value: number; readonly count?: number };

const keysOf = new WeakMap<MetricId, string>();

/** A metric's identity as a string, kept per object: a scenario adds the same datums and asks for the same metrics over and over. */
export const metricKey = (id: MetricId): string => {
  let key = keysOf.get(id);
  if (key === undefined) {
    const { namespace, name, dimensions } = id;
    key = `${namespace}|${name}|${JSON.stringify(Object.entries(dimensions).sort(([a], [b]) => a.localeCompare(b)))}`;
    keysOf.set(id, key);
  }
  return key;
};

type Samples = [value: number, count: number][];

/**
 * A store of datapoints, or what a `base` store holds and more: a scenario's runs under many seeds
 * of the routing share what no seed changes (the warm-up, the functions not deployed) and add the
 * rest apiece.
 */
export class MetricStore {
  private readonly metrics = new Map<string, Map<number, Samples>>();
  /** Statistics already computed, by metric, statistic and span: alarms ask for the same periods minute after minute. */
  private readonly computed = new Map<string, Map<string, number | undefined>>();

  private readonly base: MetricStore | undefined;

  constructor(base?: MetricStore) {
    this.base = base;
  }

  /** `datum` published in `minute`, `times` over (as many identical requests). */
  add(minute: number, datum: Datum, times = 1) {
    const key = metricKey(datum);
    this.computed.delete(key);
    let perMinute = this.metrics.get(key);
    if (perMinute === undefined) this.metrics.set(key, (perMinute = new Map()));
    let samples = perMinute.get(minute);
    if (samples === undefined) perMinute.set(minute, (samples = []));
    const same = samples.find(([value]) => value === datum.value);
    const count = (datum.count ?? 1) * times;
    if (same !== undefined) same[1] += count;
    else samples.push([datum.value, count]);
  }

  /** Every metric this store added a datapoint to (not its base's), by key. */
  ownKeys(): string[] {
    return [...this.metrics.keys()];
  }

  /** Every metric that has a datapoint, by key (for a scenario's checks of what is there). */
  keys(): string[] {
    return [...new Set([...(this.base?.keys() ?? []), ...this.metrics.keys()])];
  }

  /** The values of `id` published in minutes `from` to `to`, both included; empty when none. */
  samples(id: MetricId, from: number, to: number): Samples {
    const found: Samples = this.base?.samples(id, from, to) ?? [];
    const perMinute = this.metrics.get(metricKey(id));
    if (perMinute === undefined || to < from) return found;
    if (to - from < perMinute.size) for (let minute = from; minute <= to; minute++) found.push(...(perMinute.get(minute) ?? []));
    else for (const [minute, samples] of perMinute) if (minute >= from && minute <= to) found.push(...samples);
    return found;
  }

  /** `stat` of the values of `id` in minutes `from` to `to`, or undefined when there are none. */
  statistic(id: MetricId, stat: string, from: number, to: number): number | undefined {
    const metric = metricKey(id);
    if (this.base !== undefined && !this.metrics.has(metric)) return this.base.statistic(id, stat, from, to);
    let known = this.computed.get(metric);
    if (known === undefined) this.computed.set(metric, (known = new Map()));
    const key = `${stat}|${from}|${to}`;
    if (!known.has(key)) known.set(key, statistic(stat, this.samples(id, from, to)));
    return known.get(key);
  }
}

/** The nearest-rank percentile p (0–100): the smallest value at or below which p % of the values lie. */
const percentile = (sorted: Samples, total: number, p: number) => {
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (const [value, count] of sorted) {
    seen += count;
    if (seen >= rank) return value;
  }
  return sorted.at(-1)![0];
};

/**
 * A statistic of the values, or undefined when there are none (no datapoint). Percentiles are
 * nearest-rank: CloudWatch estimates them, and with fewer than 100 values a p99 is the largest.
 */
export const statistic = (stat: string, samples: Samples): number | undefined => {
  const total = samples.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return undefined;
  const sum = samples.reduce((acc, [value, count]) => acc + value * count, 0);
  const sorted = [...samples].sort(([a], [b]) => a - b);
  const rank = /^PR\(([\d.]*):([\d.]*)\)$/.exec(stat);
  if (rank !== null) {
    const [lo, hi] = [rank[1] === '' ? -Infinity : Number(rank[1]), rank[2] === '' ? Infinity : Number(rank[2])];
    const within = samples.filter(([value]) => value > lo && value <= hi).reduce((acc, [, count]) => acc + count, 0);
    return (100 * within) / total;
  }
  const p = /^p(\d+(?:\.\d+)?)$/.exec(stat);
  if (p !== null) return percentile(sorted, total, Number(p[1]));
  switch (stat) {
    case 'Sum':
      return sum;
    case 'SampleCount':
      return total;
    case 'Average':
      return sum / total;
    case 'Minimum':
      return sorted[0]![0];
    case 'Maximum':
      return sorted.at(-1)![0];
    default:
      throw new Error(`statistic ${stat} is not modelled by this evaluator`);
  }
};
