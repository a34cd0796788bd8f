import type { TestProject } from 'vitest/node';
import { type DynamoDbCredentials, startDynamoDbLocal, type DynamoDbLocal } from '../infra/local/dynamodb-local.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoDbEndpoint: string;
    /** What it answers to: test/worker-environment.ts hands them to each test file's process. */
    dynamoDbCredentials: DynamoDbCredentials;
  }
}

/**
 * The one DynamoDB Local of this run and how many groups use it. Each group that needs it runs
 * this setup (vitest runs a project's global setup only when the project has files to run), in
 * vitest's own process: the first starts it, the last to finish stops it.
 */
const shared = globalThis as typeof globalThis & { storeOrdersDynamoDbLocal?: { local: Promise<DynamoDbLocal>; users: number } };

/** One DynamoDB Local for the whole run (it takes seconds to start); tests share it through unique table names. */
export default async function setup(project: TestProject) {
  shared.storeOrdersDynamoDbLocal ??= { local: startDynamoDbLocal(), users: 0 };
  const entry = shared.storeOrdersDynamoDbLocal;
  entry.users += 1;
  const dynamoDb = await entry.local;
  project.provide('dynamoDbEndpoint', dynamoDb.endpoint);
  project.provide('dynamoDbCredentials', dynamoDb.credentials);
  return async () => {
    entry.users -= 1;
    if (entry.users > 0) return;
    shared.storeOrdersDynamoDbLocal = undefined;
    await dynamoDb.stop();
  };
}
