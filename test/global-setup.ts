import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../infra/local/dynamodb-local.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoDbEndpoint: string;
  }
}

/** One DynamoDB Local for the whole run (it takes seconds to start); tests share it through unique table names. */
export default async function setup(project: TestProject) {
  const dynamoDb = await startDynamoDbLocal();
  project.provide('dynamoDbEndpoint', dynamoDb.endpoint);
  return () => dynamoDb.stop();
}
