/**
 * Leases of running lists, so that one key cannot hold every list slot (docs/operating.md#reliability).
 * A running list holds one item, `<keyId>#<slot>`, in the list-leases table: written with a
 * condition (the slot is free, or its lease has expired) and deleted when the list ends, however
 * it ends. A list whose function is stopped before it can delete (its timeout, a crash) leaves a
 * lease that expires when the function's time would have run out; DynamoDB's TTL removes such
 * items later, but expiry is judged here from `expiresAt`, never from the TTL's deletion, and an
 * `expiresAt` beyond `maxLeaseSeconds` from now is not believed.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { callDeadline, type Deadline, type TableRef, toServiceError } from '../../shared/dynamo.ts';

export type ListLease = { readonly lease: string; readonly holder: string };

/** The table's key and TTL attribute (the stack and the local tables use these names). */
export const listLeaseAttributes = { key: 'lease', expiresAt: 'expiresAt' } as const;

const epochSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/**
 * The longest a lease can honestly last: Lambda's longest function timeout (900 s) plus the
 * minute a list adds past its function's time. A lease whose `expiresAt` lies further ahead than
 * this from now was not written by a list (a hand-written or corrupt item): it counts as expired,
 * as does one whose `expiresAt` is missing or not a number, so no item can hold a slot for good.
 */
export const maxLeaseSeconds = 900 + 60;

/**
 * Takes one of `slots` leases of `keyId` for the request `holder`, trying the slots in order;
 * undefined when every slot is held by a lease that has not expired.
 */
export const acquireListLease = async (
  table: TableRef,
  options: { keyId: string; holder: string; slots: number; expiresAt: Date; now?: Date; deadline?: Deadline },
): Promise<ListLease | undefined> => {
  const { keyId, holder, slots, expiresAt, now = new Date(), deadline = callDeadline() } = options;
  const latest = epochSeconds(now) + maxLeaseSeconds;
  for (let slot = 0; slot < slots; slot++) {
    const lease = `${keyId}#${slot}`;
    try {
      await table.client.send(
        new PutCommand({
          TableName: table.tableName,
          Item: { lease, holder, expiresAt: Math.min(epochSeconds(expiresAt), latest) },
          ConditionExpression:
            'attribute_not_exists(#lease) OR #expiresAt < :now OR #expiresAt > :latest OR NOT attribute_type(#expiresAt, :number)',
          ExpressionAttributeNames: { '#lease': listLeaseAttributes.key, '#expiresAt': listLeaseAttributes.expiresAt },
          ExpressionAttributeValues: { ':now': epochSeconds(now), ':latest': latest, ':number': 'N' },
        }),
        deadline(),
      );
      return { lease, holder };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw toServiceError(error);
    }
  }
  return undefined;
};

/** Gives the lease back, unless another list has taken the slot since (it had expired). */
export const releaseListLease = async (table: TableRef, lease: ListLease, deadline: Deadline = callDeadline()): Promise<void> => {
  try {
    await table.client.send(
      new DeleteCommand({
        TableName: table.tableName,
        Key: { lease: lease.lease },
        ConditionExpression: '#holder = :holder',
        ExpressionAttributeNames: { '#holder': 'holder' },
        ExpressionAttributeValues: { ':holder': lease.holder },
      }),
      deadline(),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw toServiceError(error);
  }
};
