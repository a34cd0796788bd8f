import { inject } from 'vitest';

// The run's DynamoDB Local answers only the credentials it was started with (test/global-setup.ts).
// Every client a test makes of it, in this process or a child (`npm start`, the key tool, a shipped
// bundle), signs with them as a local function does: from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
const { accessKeyId, secretAccessKey } = inject('dynamoDbCredentials');
process.env.AWS_ACCESS_KEY_ID = accessKeyId;
process.env.AWS_SECRET_ACCESS_KEY = secretAccessKey;
delete process.env.AWS_SESSION_TOKEN;
