/** `npm run bench`'s settings (from the environment, see bench.ts), its tables, and its progress log on stderr. */
import { resolve } from 'node:path';
import { callerPath } from '../../infra/local/start-checks.ts';
import { localStage } from '../../infra/stage-config.ts';
import { functionEnvSchema } from '../../shared/config.ts';
import * as z from '../../shared/zod.ts';

const positiveInt = (name: string, fallback: number, min = 1): number => {
  const text = process.env[name];
  const value = text === undefined || text === '' ? fallback : Number(text);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}, got ${JSON.stringify(text)}`);
  return value;
};

const repoRoot = resolve(import.meta.dirname, '../..');

/** `.local/bench-<UTC time>.json` in the repository (git-ignored): one file per run, none overwritten. */
const defaultOutFile = () => resolve(repoRoot, `.local/bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);

export const settings = {
  orders: positiveInt('BENCH_ORDERS', 100_000, 10),
  reps: positiveInt('BENCH_REPS', 5),
  strict: process.env.BENCH_STRICT === '1',
  out: process.env.BENCH_OUT ? callerPath(process.env.BENCH_OUT) : defaultOutFile(),
  // The segment count the list handler is given (SCAN_SEGMENTS, default the local stage's): the floor scans the same way.
  segments: z._default(functionEnvSchema.shape.SCAN_SEGMENTS.def.innerType, localStage.scanSegments).parse(process.env.SCAN_SEGMENTS),
  memoryRuns: 2,
  // The slow client takes this long for the whole body, longer than the Scan itself.
  slowReadMs: 5_000,
  cancels: 500,
  cancelsSequential: 100,
  cancelWarmup: 50,
  concurrency: 8,
  sampleEveryMs: 20,
};

export const tables = { orders: 'bench-orders', apiKeys: 'bench-api-keys' };

const started = performance.now();
const seconds = () => `${Math.round((performance.now() - started) / 1000)} s`;
export const log = (message: string) => process.stderr.write(`[bench ${seconds()}] ${message}\n`);

/** The run's steps, announced as they begin, so a reader knows how far along it is. */
const steps = [
  'start DynamoDB Local',
  'seed the orders table',
  'list: warm-up and checks',
  'list: timed rounds',
  'list: memory runs',
  'client package: list',
  'cancel: concurrent clients',
  'cancel: one client',
] as const;
export const step = (name: (typeof steps)[number], detail = '') =>
  log(`step ${steps.indexOf(name) + 1}/${steps.length}: ${name}${detail === '' ? '' : ` (${detail})`}…`);
