/**
 * The cold-start floor (test/perf/cold-start.ts): what every function of the service loads at
 * the least, the DynamoDB document client, bundled as the functions are and doing nothing else.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

const client = DynamoDBDocumentClient.from(new DynamoDBClient({}), { unmarshallOptions: { wrapNumbers: true } });

export const handler = async () => client;
