import { defineConfig } from 'vitest/config';

/**
 * Groups that reach DynamoDB Local: only they start it (and so need Java); the others run without.
 * It answers only its own credentials, which each test file's process gets in its environment.
 */
const withDynamoDbLocal = { globalSetup: ['test/global-setup.ts'], setupFiles: ['test/worker-environment.ts'] };

/** One project per folder of test/, so each runs alone: `npm run test:<name>` (`vitest run --project <name>`). */
const group = (name: string, extra: { globalSetup?: string[]; setupFiles?: string[]; isolate?: boolean } = {}) => ({
  test: { name, include: [`test/${name}/**/*.test.ts`], ...extra },
});

export default defineConfig({
  test: {
    // Inline projects inherit every option below (vitest 5's `extends: true`), but not a root
    // `globalSetup`: that would run for every run, unit tests alone included.
    projects: [
      group('unit'),
      group('integration', withDynamoDbLocal),
      group('http', withDynamoDbLocal),
      // Unisolated: the files a worker runs share one synthesized app (test/lib/cdk.ts, sharedApp),
      // instead of a synth per file, most of each file's time.
      group('infra', { isolate: false }),
      group('shipped', withDynamoDbLocal),
      group('docs'),
      group('client', withDynamoDbLocal),
    ],
    // Many files mostly wait (child processes, DynamoDB Local, 5 s deadlines): one worker more
    // than a 2-core machine's default keeps both cores busy (measured: 315 s → 242 s).
    maxWorkers: 3,
    // Timeouts bound a hang, not speed: two suites at once on a 2-core machine take twice as long
    // as one (docs/developing.md#small-decisions), and a test that waits for a readiness
    // signal must not fail for being slow.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    env: {
      // The handlers' own logs and EMF metrics would drown the test report; tests that
      // check logging capture them explicitly.
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
      AWS_REGION: 'us-east-1',
    },
  },
});
