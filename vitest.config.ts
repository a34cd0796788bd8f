import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // DynamoDB Local starts once per run; each test file makes tables of its own.
    globalSetup: ['test/global-setup.ts'],
    // Many files mostly wait (child processes, DynamoDB Local, 5 s deadlines): one worker more
    // than a 2-core machine's default keeps both cores busy (measured: 315 s → 242 s).
    maxWorkers: 3,
    // Timeouts bound a hang, not speed: two suites at once on a 2-core machine take twice as long
    // as one (issue 20), and a test that waits for a readiness signal must not fail for being slow.
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
