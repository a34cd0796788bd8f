import { inject } from 'vitest';

// Each test file's process environment, set before the file runs (vitest.config.ts, setupFiles).

// The run's DynamoDB Local answers only the credentials it was started with (test/global-setup.ts).
// Every client a test makes of it, in this process or a child (`npm start`, the key tool, a shipped
// bundle), signs with them as a local function does: from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
const { accessKeyId, secretAccessKey } = inject('dynamoDbCredentials');
process.env.AWS_ACCESS_KEY_ID = accessKeyId;
process.env.AWS_SECRET_ACCESS_KEY = secretAccessKey;
delete process.env.AWS_SESSION_TOKEN;

// A local API an earlier file ran in this process set the local runtime's AWS_LAMBDA_MAX_CONCURRENCY
// (infra/local/lambda-runtime.ts). It is that runtime's: a child process (the key tool, the load
// program) that inherited it would find no invoke store, and Powertools refuses to start without one.
delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
