/**
 * The only writes the service's probes make (the synthetic client, the pre-traffic hook, and
 * `npm run smoke` against `npm start`): orders of their own in the orders table, in a reserved id
 * (shared/probes.ts), pending or shipped, which their checks cancel through the API, read back and
 * delete; and their run's counts in CloudWatch (ProbeBusy; the synthetic client's
 * CanarySetupFailed). The probes' roles allow exactly these items, attributes and namespace
 * (infra/cdk/probe-access.ts; docs/api.md#orders-the-service-keeps-for-its-own-checks).
 */
import { CloudWatchClient, type MetricDatum, PutMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { SetupFailed } from './answers.ts';
import type { ProbeOrderStore, StoredProbeOrder } from './known-answers.ts';
import { metricNames, probeMetricsNamespace } from './observability.ts';
import { probeOrderId } from './probes.ts';

/** The probe orders of one prober: where, whose (`by`, written as `probe`), in which slots, and for how long at most. */
export type ProbeOrders = {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly by: string;
  readonly slots: readonly number[];
  /** A leftover of a run that crashed is free again this long after it was written (the prober's own timeout). */
  readonly lifetimeSeconds: number;
  /** Each call's abort signal (the run's deadline). */
  readonly signal: () => AbortSignal;
};

const epochSeconds = () => Math.floor(Date.now() / 1000);

/**
 * Writes an order of the prober's own with `status` in the first free slot, starting from one its
 * name picks (so that hooks running at once start apart): free is absent, expired, or the prober's
 * own leftover. Never overwrites anything else: an item another system wrote there stays. Its id.
 */
export const putProbeOrder = async (orders: ProbeOrders, status: 'pending' | 'shipped'): Promise<string> => {
  const start = [...orders.by].reduce((sum, char) => sum + char.charCodeAt(0), 0) % orders.slots.length;
  const now = epochSeconds();
  for (let i = 0; i < orders.slots.length; i++) {
    const id = probeOrderId(orders.slots[(start + i) % orders.slots.length]!);
    try {
      await orders.client.send(
        new PutItemCommand({
          TableName: orders.tableName,
          Item: {
            id: { N: id },
            status: { S: status },
            probe: { S: orders.by },
            probeExpiresAt: { N: String(now + orders.lifetimeSeconds) },
          },
          ConditionExpression: 'attribute_not_exists(#id) OR #expires < :now OR #probe = :by',
          ExpressionAttributeNames: { '#id': 'id', '#expires': 'probeExpiresAt', '#probe': 'probe' },
          ExpressionAttributeValues: { ':now': { N: String(now) }, ':by': { S: orders.by } },
        }),
        { abortSignal: orders.signal() },
      );
      return id;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
  throw new Error(`every probe order slot (${orders.slots.length}) is held by another probe`);
};

/** The probe order as stored (consistent read): its status and cancelledAt, or undefined when it is gone. */
export const readProbeOrder = async (orders: ProbeOrders, id: string): Promise<StoredProbeOrder | undefined> => {
  const { Item } = await orders.client.send(
    new GetItemCommand({
      TableName: orders.tableName,
      Key: { id: { N: id } },
      ConsistentRead: true,
      ProjectionExpression: '#status, #cancelledAt',
      ExpressionAttributeNames: { '#status': 'status', '#cancelledAt': 'cancelledAt' },
    }),
    { abortSignal: orders.signal() },
  );
  return Item === undefined ? undefined : { status: Item.status?.S, cancelledAt: Item.cancelledAt?.S };
};

/** Deletes the probe order, unless another prober has taken its slot since; `signal`: a budget of its own, past the checks' deadline. */
export const deleteProbeOrder = async (orders: ProbeOrders, id: string, signal = orders.signal()): Promise<void> => {
  try {
    await orders.client.send(
      new DeleteItemCommand({
        TableName: orders.tableName,
        Key: { id: { N: id } },
        ConditionExpression: '#probe = :by',
        ExpressionAttributeNames: { '#probe': 'probe' },
        ExpressionAttributeValues: { ':by': { S: orders.by } },
      }),
      { abortSignal: signal },
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
};

const messageOf = (error: unknown) =>
  error instanceof Error
    ? error.name === 'TimeoutError' || error.name === 'AbortError'
      ? 'no answer in time'
      : `${error.name}: ${error.message}`
    : String(error);

/**
 * The checks' view of the prober's orders: a write or a read DynamoDB refuses (IAM, throttling, the
 * table) is the prober's setup failing (SetupFailed), not the release's answer; a deletion that
 * fails is noted with `note` (the slot is free again once the order expires).
 */
export const probeOrderStore = (orders: ProbeOrders, note: (line: string) => void): ProbeOrderStore => ({
  put: (status) =>
    putProbeOrder(orders, status).catch((error: unknown) => {
      throw new SetupFailed(`could not write its ${status} probe order in ${orders.tableName}: ${messageOf(error)}`);
    }),
  read: (id) =>
    readProbeOrder(orders, id).catch((error: unknown) => {
      throw new SetupFailed(`could not read its probe order ${id} back: ${messageOf(error)}`);
    }),
  remove: (id) =>
    deleteProbeOrder(orders, id, AbortSignal.timeout(5_000)).catch((error: unknown) =>
      note(`probe order ${id} not deleted (its slot is free again once it expires): ${messageOf(error)}`),
    ),
});

const cloudwatch = new CloudWatchClient({ maxAttempts: 3 });

/**
 * The run's counts (namespace StoreOrders/Probes, dimension `service`, as the functions' own
 * metrics): ProbeBusy, how many of its checks found the service busy until their time ran out; and,
 * for the synthetic client, ProbeSetupFailed, how many it could not set up. 0 included, so that
 * every run is a datapoint. A failure to publish is the caller's to log, never the run's verdict.
 */
export const publishProbeRun = async (service: string, counts: { busy: number; setupFailed?: number }, signal: AbortSignal) => {
  const datum = (MetricName: string, Value: number): MetricDatum => ({
    MetricName,
    Dimensions: [{ Name: 'service', Value: service }],
    Value,
    Unit: 'Count',
  });
  await cloudwatch.send(
    new PutMetricDataCommand({
      Namespace: probeMetricsNamespace,
      MetricData: [
        datum(metricNames.probeBusy, counts.busy),
        ...(counts.setupFailed === undefined ? [] : [datum(metricNames.probeSetupFailed, counts.setupFailed)]),
      ],
    }),
    { abortSignal: signal },
  );
};
