/**
 * The only writes the service's probes make (the synthetic client and the pre-traffic hook): an
 * order of their own in the orders table, pending, in a reserved id (shared/probes.ts), which they
 * cancel through the API, read back, and delete; and their ProbeBusy count in CloudWatch. The
 * probes' roles allow exactly these items, attributes and namespace
 * (infra/cdk/probe-access.ts; docs/api.md#orders-the-service-keeps-for-its-own-checks).
 */
import { CloudWatchClient, PutMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { fail } from './answers.ts';
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

/** The prober's pending order `id`, as written: free again `lifetimeSeconds` after `now`. */
const pendingItem = (orders: ProbeOrders, id: string, now: number) => ({
  id: { N: id },
  status: { S: 'pending' },
  probe: { S: orders.by },
  probeExpiresAt: { N: String(now + orders.lifetimeSeconds) },
});

/**
 * Writes a pending order of the prober's own in the first free slot, starting from one its name
 * picks (so that hooks running at once start apart): free is absent, expired, or the prober's own
 * leftover. Never overwrites anything else: an item another system wrote there stays. Returns its id.
 */
export const createProbeOrder = async (orders: ProbeOrders): Promise<string> => {
  const start = [...orders.by].reduce((sum, char) => sum + char.charCodeAt(0), 0) % orders.slots.length;
  const now = epochSeconds();
  for (let i = 0; i < orders.slots.length; i++) {
    const id = probeOrderId(orders.slots[(start + i) % orders.slots.length]!);
    try {
      await orders.client.send(
        new PutItemCommand({
          TableName: orders.tableName,
          Item: pendingItem(orders, id, now),
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
  return fail(`every probe order slot (${orders.slots.length}) is held by another probe`);
};

/**
 * Writes the prober's own order `id` pending again (after a comparison cancelled it through another
 * version: functions/pre-traffic-hook/checks.ts); never an item another prober or system holds.
 */
export const putBackPending = async (orders: ProbeOrders, id: string): Promise<void> => {
  await orders.client.send(
    new PutItemCommand({
      TableName: orders.tableName,
      Item: pendingItem(orders, id, epochSeconds()),
      ConditionExpression: '#probe = :by',
      ExpressionAttributeNames: { '#probe': 'probe' },
      ExpressionAttributeValues: { ':by': { S: orders.by } },
    }),
    { abortSignal: orders.signal() },
  );
};

/** The probe order as stored (consistent read): its status and cancelledAt, or undefined when it is gone. */
export const readProbeOrder = async (orders: ProbeOrders, id: string): Promise<{ status?: string; cancelledAt?: string } | undefined> => {
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

/**
 * Cancels the probe's pending order through the service (`cancel` answers the request id of a 204,
 * or throws the check's failure), reads it back, and cancels it again: 204 both times, and stored
 * `cancelled` with its `cancelledAt` in between. A release that answers 409 for a pending order,
 * or 204 without cancelling, fails here.
 */
export const checkProbeCancel = async (orders: ProbeOrders, id: string, cancel: (id: string) => Promise<string>): Promise<string> => {
  const first = await cancel(id);
  const stored = await readProbeOrder(orders, id);
  if (stored?.status !== 'cancelled' || stored.cancelledAt === undefined)
    fail(
      `answered 204, but the order is stored ${stored === undefined ? 'nowhere' : JSON.stringify(stored)}, not cancelled with its cancelledAt`,
    );
  await cancel(id);
  return `order ${id}: 204 (X-Request-Id ${first}), stored cancelled at ${stored!.cancelledAt}, and 204 again`;
};

const cloudwatch = new CloudWatchClient({ maxAttempts: 3 });

/**
 * The run's ProbeBusy and, for the synthetic client, its ProbeSetupFailed (namespace
 * StoreOrders/Probes, dimension `service`, as the functions' own metrics): how many of its checks
 * found the service busy until their time ran out, and how many of its own setup steps failed, 0
 * included, so that every run is a datapoint. A failure to publish is the caller's to log, never
 * the run's verdict.
 */
export const publishProbeBusy = async (service: string, busy: number, signal: AbortSignal, setupFailed?: number) => {
  const datum = (MetricName: string, Value: number) => ({
    MetricName,
    Dimensions: [{ Name: 'service', Value: service }],
    Value,
    Unit: 'Count' as const,
  });
  await cloudwatch.send(
    new PutMetricDataCommand({
      Namespace: probeMetricsNamespace,
      MetricData: [
        datum(metricNames.probeBusy, busy),
        ...(setupFailed === undefined ? [] : [datum(metricNames.probeSetupFailed, setupFailed)]),
      ],
    }),
    { abortSignal: signal },
  );
};
