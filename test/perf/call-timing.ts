/**
 * Part of `npm run bench`: what the DynamoDB call timing (shared/dynamo-calls.ts) costs a request.
 * The same GetItem against DynamoDB Local through two document clients made by
 * createDocumentClient, one with the timing middlewares taken off again, in alternating blocks
 * so that machine noise falls on both alike; CPU time of this process per call, as a ratio, and
 * the cost of the request's completion fields and metrics over a record of 20 calls.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { dynamoDbFields, dynamoDbRecord, publishDynamoDbMetrics, startDynamoDbRecord } from '../../shared/dynamo-calls.ts';

const cpuMs = async (task: () => Promise<void>) => {
  const before = process.cpuUsage();
  await task();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
};

export const benchCallTiming = async (endpoint: string, tableName: string, calls = 400) => {
  const timed = createDocumentClient({ endpoint });
  const untimed = createDocumentClient({ endpoint });
  untimed.middlewareStack.remove('storeOrdersCallTiming');
  untimed.middlewareStack.remove('storeOrdersAttemptThrottles');
  const get = (client: typeof timed) => client.send(new GetCommand({ TableName: tableName, Key: { keyHash: 'no-such-key' } }));
  const block = async (client: typeof timed, count: number) =>
    cpuMs(async () => {
      for (let i = 0; i < count; i++) await get(client);
      startDynamoDbRecord();
    });
  await block(timed, 50);
  await block(untimed, 50);
  const totals = { timed: 0, untimed: 0 };
  const blockSize = Math.ceil(calls / 8);
  for (let done = 0; done < calls; done += blockSize) {
    totals.timed += await block(timed, blockSize);
    totals.untimed += await block(untimed, blockSize);
  }
  // The completion line's fields and the per-operation metrics of a request of 20 calls.
  startDynamoDbRecord();
  for (let i = 0; i < 20; i++) await get(timed);
  const record = [...dynamoDbRecord()];
  const rounds = 2_000;
  const finishMs =
    (await cpuMs(async () => {
      for (let i = 0; i < rounds; i++) {
        dynamoDbFields(record);
        publishDynamoDbMetrics(record);
      }
    })) / rounds;
  timed.destroy();
  untimed.destroy();
  const perCall = { timed: totals.timed / calls, untimed: totals.untimed / calls };
  return {
    cpuMsPerCallTimed: perCall.timed,
    cpuMsPerCallUntimed: perCall.untimed,
    ratio: perCall.timed / perCall.untimed,
    finishCpuMsPer20Calls: finishMs,
    text:
      `DynamoDB call timing (shared/dynamo-calls.ts), ${calls} GetItems each way: CPU ${perCall.timed.toFixed(3)} ms a call timed, ` +
      `${perCall.untimed.toFixed(3)} ms untimed: ${(perCall.timed / perCall.untimed).toFixed(2)}×; ` +
      `completion fields and metrics of a 20-call request: ${finishMs.toFixed(3)} ms CPU`,
  };
};
