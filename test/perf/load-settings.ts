/** `npm run load`'s settings (from the environment, see load.ts), its key, and how it writes sizes and times. */
import { randomUUID } from 'node:crypto';
import { localStage } from '../../infra/stage-config.ts';

const setting = (name: string, fallback: number, min: number): number => {
  const text = process.env[name];
  const value = text === undefined || text === '' ? fallback : Number(text);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number ≥ ${min}, got ${JSON.stringify(text)}`);
  return value;
};

export const settings = {
  seconds: setting('LOAD_SECONDS', 15, 1),
  rounds: Math.trunc(setting('LOAD_ROUNDS', 3, 1)),
  connections: Math.trunc(setting('LOAD_CONNECTIONS', 8, 2)),
  orders: Math.trunc(setting('LOAD_ORDERS', 20_000, 10)),
  overloadSeconds: Math.trunc(setting('LOAD_OVERLOAD_SECONDS', 20, 0)),
  overloadConnections: Math.trunc(setting('LOAD_OVERLOAD_CONNECTIONS', 50, 2)),
  overloadListShare: setting('LOAD_OVERLOAD_LIST_SHARE', 0.1, 0),
  checkFairness: setting('LOAD_CHECK_FAIRNESS', 1, 0) !== 0,
};
// No more lists at once than the local stage runs: the rounds measure lists and cancels side by side, the overload the refusals.
export const listConnections = Math.min(localStage.listReservedConcurrency, Math.max(1, Math.round(settings.connections / 4)));
export const cancelConnections = settings.connections - listConnections;
export const roundSeconds = Math.max(1, Math.round(settings.seconds / settings.rounds));
export const key = `so_local_load-${randomUUID()}`;
export const repoRoot = new URL('../../', import.meta.url);

export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
export const ms = (value: number) => `${value} ms`;
