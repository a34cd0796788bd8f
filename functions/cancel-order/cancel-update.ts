import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { NumberValue, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { callDeadline, type Deadline, type TableRef, toServiceError } from '../../shared/dynamo.ts';
import { orderStatus } from '../../shared/schemas.ts';

export type CancelOutcome =
  | { outcome: 'cancelled' }
  | { outcome: 'already_cancelled' }
  | { outcome: 'not_found' }
  | { outcome: 'not_cancellable'; status: string | undefined };

/**
 * Cancels a pending order in one conditional write. When the condition fails DynamoDB hands
 * back the item as it was (ALL_OLD), which tells a missing order from a shipped or an
 * already cancelled one without a second read.
 */
export const cancelOrder = async (
  table: TableRef,
  id: string,
  options: { readonly deadline?: Deadline; readonly now?: Date } = {},
): Promise<CancelOutcome> => {
  const { deadline = callDeadline(), now = new Date() } = options;
  try {
    await table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { id: NumberValue.from(id) },
        UpdateExpression: 'SET #status = :cancelled, #cancelledAt = :now',
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status', '#cancelledAt': 'cancelledAt' },
        ExpressionAttributeValues: { ':cancelled': orderStatus.cancelled, ':pending': orderStatus.pending, ':now': now.toISOString() },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
      deadline(),
    );
    return { outcome: 'cancelled' };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw toServiceError(error);
    // The old item arrives in raw attribute-value form: the document client does not unmarshall it.
    if (error.Item === undefined) return { outcome: 'not_found' };
    const status = unmarshall(error.Item, { wrapNumbers: true }).status;
    if (status === orderStatus.cancelled) return { outcome: 'already_cancelled' };
    return { outcome: 'not_cancellable', status: typeof status === 'string' ? status : undefined };
  }
};
