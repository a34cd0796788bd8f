/**
 * The cold-start floor with the DynamoDB call timing (test/perf/cold-start.ts): the floor's
 * document client, with shared/dynamo-calls.ts's middlewares on it (their Powertools Metrics
 * included, which every function loads anyway), so that its row against the floor is at most
 * what the timing costs a cold start.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { addCallTiming } from '../../shared/dynamo-calls.ts';

const raw = new DynamoDBClient({});
addCallTiming(raw);
const client = DynamoDBDocumentClient.from(raw, { unmarshallOptions: { wrapNumbers: true } });

export const handler = async () => client;
