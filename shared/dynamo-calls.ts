/**
 * What a request spent in DynamoDB, without a tracing SDK: two small middlewares on the DynamoDB
 * client's middleware stack (docs/decisions/0137-dynamodb-calls-are-timed-by-sdk-middleware.md).
 * The outer one (step `initialize`, around the SDK's retries) times the whole call and reads
 * what the retry middleware writes on the output or the error (`$metadata.attempts`) and the
 * consumed capacity (it asks for `ReturnConsumedCapacity: TOTAL` where the operation has it);
 * the inner one (step `finalizeRequest`, below the retries) sees each attempt and counts the
 * throttled ones. A call is recorded for the request in progress; the request's envelope
 * (shared/http.ts) puts the record in its completion line and publishes the per-operation
 * metrics. Lambda runs one request at a time per execution environment, so the record is the
 * process's; where invocations share a process (AWS_LAMBDA_MAX_CONCURRENCY: Lambda Managed
 * Instances, and the local gateway, infra/local/lambda-runtime.ts) it is the invocation's, kept in
 * Lambda's InvokeStore as Powertools keeps its Logger's keys.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { metricNames, metricsNamespace } from './observability.ts';

/** One DynamoDB call as the completion line lists it. */
export type DynamoDbCall = {
  /** DynamoDB's operation name (`Scan`, `UpdateItem`, …). */
  readonly operation: string;
  readonly table: string;
  /** The whole call, its retries and their back-off included. */
  readonly ms: number;
  readonly attempts: number;
  /** Capacity units the call consumed, as DynamoDB reports them (absent on a failed call). */
  readonly capacity?: number;
  /** Attempts DynamoDB throttled. */
  readonly throttled: number;
  /** The error the call ended with, if it failed (a condition that did not hold included). */
  readonly error?: string;
};

/** The operations that report consumed capacity when asked (`ReturnConsumedCapacity`). */
const capacityOperations = new Set(['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Scan', 'Query']);
/** DynamoDB's throttling errors (the SDK retries them). */
const throttleNames = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);
/** How many calls a completion line lists one by one; the totals count them all. */
export const listedCalls = 20;

/** The record of the one invocation a process runs at a time. */
let processCalls: DynamoDbCall[] = [];
const recordKey = Symbol.for('storeOrders.dynamoDbCalls');

type InvokeStore = { hasContext(): boolean; get(key: symbol): unknown; set(key: symbol, value: unknown): void };

/** The invocation's own store, where invocations run side by side in this process; undefined where they do not. */
const invocationStore = (): InvokeStore | undefined => {
  if (!process.env.AWS_LAMBDA_MAX_CONCURRENCY) return undefined;
  const store = (globalThis as { awslambda?: { InvokeStore?: InvokeStore } }).awslambda?.InvokeStore;
  return store?.hasContext() ? store : undefined;
};

/** The record of the request in progress. */
const currentCalls = (): DynamoDbCall[] => {
  const store = invocationStore();
  if (store === undefined) return processCalls;
  const found = store.get(recordKey) as DynamoDbCall[] | undefined;
  if (found !== undefined) return found;
  const fresh: DynamoDbCall[] = [];
  store.set(recordKey, fresh);
  return fresh;
};

/** A request starts: its record is empty. */
export const startDynamoDbRecord = () => {
  const store = invocationStore();
  if (store === undefined) processCalls = [];
  else store.set(recordKey, []);
};

/** The calls recorded since the request started. */
export const dynamoDbRecord = (): readonly DynamoDbCall[] => currentCalls();

type Metadata = { attempts?: number } | undefined;
type AttemptCounter = { throttled: number };
const attemptsKey = Symbol('dynamoDbAttempts');

/** Adds the two timing middlewares to a client (createDocumentClient does, for every client). */
export const addCallTiming = (client: DynamoDBClient) => {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = String(context.commandName ?? 'unknown').replace(/Command$/, '');
      const input = args.input as { TableName?: unknown; ReturnConsumedCapacity?: unknown };
      const counter: AttemptCounter = { throttled: 0 };
      (context as Record<symbol, unknown>)[attemptsKey] = counter;
      const started = performance.now();
      const record = (metadata: Metadata, capacity: unknown, error?: string) =>
        currentCalls().push({
          operation,
          table: String(input.TableName ?? ''),
          ms: Math.round(performance.now() - started),
          attempts: metadata?.attempts ?? 1,
          ...(typeof capacity === 'number' ? { capacity } : {}),
          throttled: counter.throttled,
          ...(error === undefined ? {} : { error }),
        });
      const asked =
        capacityOperations.has(operation) && input.ReturnConsumedCapacity === undefined
          ? { ...args, input: { ...input, ReturnConsumedCapacity: 'TOTAL' } }
          : args;
      try {
        const result = await next(asked);
        const output = result.output as { $metadata?: Metadata; ConsumedCapacity?: { CapacityUnits?: unknown } };
        record(output.$metadata, output.ConsumedCapacity?.CapacityUnits);
        return result;
      } catch (error) {
        const failed = error as { name?: unknown; $metadata?: Metadata };
        record(failed.$metadata, undefined, String(failed.name ?? 'Error'));
        throw error;
      }
    },
    { step: 'initialize', priority: 'high', name: 'storeOrdersCallTiming' },
  );
  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        const counter = (context as Record<symbol, AttemptCounter | undefined>)[attemptsKey];
        if (counter !== undefined && throttleNames.has(String((error as { name?: unknown }).name))) counter.throttled++;
        throw error;
      }
    },
    { step: 'finalizeRequest', priority: 'low', name: 'storeOrdersAttemptThrottles' },
  );
};

/**
 * The completion line's DynamoDB fields: the first calls one by one (`dynamoDb`), then totals over
 * all of them and the slowest call, which the saved query `slowest-dynamodb-calls` sorts on.
 * Nothing when the request made no call.
 */
export const dynamoDbFields = (recorded: readonly DynamoDbCall[] = currentCalls()) => {
  if (recorded.length === 0) return {};
  const slowest = recorded.reduce((a, b) => (b.ms > a.ms ? b : a));
  const sum = (of: (call: DynamoDbCall) => number) => recorded.reduce((total, call) => total + of(call), 0);
  return {
    dynamoDb: recorded.slice(0, listedCalls),
    dynamoDbCalls: recorded.length,
    dynamoDbMs: sum((call) => call.ms),
    dynamoDbSlowestMs: slowest.ms,
    dynamoDbSlowestOperation: slowest.operation,
    dynamoDbThrottled: sum((call) => call.throttled),
    dynamoDbCapacity: Math.round(sum((call) => call.capacity ?? 0) * 100) / 100,
  };
};

/** The dimension that tells DynamoDB operations apart (a handful of values: what the code calls). */
export const dynamoDbOperationDimension = 'dynamoDbOperation';

const perOperation = new Map<string, Metrics>();
/** One Metrics per operation: its dimension set is [service, dynamoDbOperation], one EMF line per operation and request. */
const metricsOf = (operation: string) => {
  let found = perOperation.get(operation);
  if (found === undefined) {
    found = new Metrics({ namespace: metricsNamespace, defaultDimensions: { [dynamoDbOperationDimension]: operation } });
    perOperation.set(operation, found);
  }
  return found;
};

/**
 * Per-operation metrics of the recorded calls: DynamoDbLatency (each call, ms) and
 * DynamoDbThrottles (the request's throttled attempts, 0 included, so that the sum is a rate).
 */
export const publishDynamoDbMetrics = (recorded: readonly DynamoDbCall[] = currentCalls()) => {
  const throttled = new Map<string, number>();
  for (const call of recorded) {
    metricsOf(call.operation).addMetric(metricNames.dynamoDbLatency, 'Milliseconds', call.ms);
    throttled.set(call.operation, (throttled.get(call.operation) ?? 0) + call.throttled);
  }
  for (const [operation, count] of throttled) {
    const metrics = metricsOf(operation);
    metrics.addMetric(metricNames.dynamoDbThrottles, 'Count', count);
    metrics.publishStoredMetrics();
  }
};
