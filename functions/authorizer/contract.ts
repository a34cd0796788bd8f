/**
 * The authorizer's contract: no operation of the API, but a function with settings, table access
 * and alarms all the same (infra/contract.ts); the registry (infra/registry.ts) reads it, the
 * handler never does.
 */
import type { FunctionContract } from '../../infra/function-contract.ts';

export const authorizerContract = {
  name: 'authorizer' as const,
  // One GetItem per uncached key. The timeout leaves room for DynamoDB's bounded retries, so a
  // slow database ends in a failure the gateway reports (500), never in a hung request.
  function: {
    handlerFile: 'functions/authorizer/handler.ts',
    description: 'Store Orders: TOKEN authorizer (bearer API keys)',
    memorySize: 512,
    timeoutSeconds: 10,
    // Every made-up key runs it: no START/END/REPORT lines (~480 bytes an invocation), only Lambda's warnings.
    platformLogs: 'warnings',
    // Where the stage holds only issued keys, a token of another form is refused without a lookup.
    environment: (stage, tables) => ({
      API_KEYS_TABLE: tables.apiKeys,
      ...(stage.onlyIssuedKeys ? { API_KEY_PREFIX: stage.keyPrefix } : {}),
    }),
  },
  // It looks a key's hash up, nothing more.
  tableAccess: { apiKeys: ['dynamodb:GetItem'] },
  alarms: {},
  runbook: 'docs/runbook.md',
  knownAnswers: 'functions/authorizer/known-answers.ts',
} satisfies FunctionContract;
