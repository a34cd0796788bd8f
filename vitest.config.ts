import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // DynamoDB Local starts once per run; each test file makes tables of its own.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: {
      // The handlers' own logs and EMF metrics would drown the test report; tests that
      // check logging capture them explicitly.
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
      AWS_REGION: 'us-east-1',
    },
  },
});
