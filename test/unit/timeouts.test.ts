/**
 * Each function's timeout lies above the longest chain of calls it can make one after another, each
 * at its own deadline: the numbers come from the settings and the constants the code uses, the
 * chains from what each handler does (named beside each). A function stopped by its timeout answers
 * nothing (API Gateway's 5xx) and skips its own clean-up; a deadline that passes answers 503.
 */
import { describe, expect, it } from 'vitest';
import { functionSettings } from '../../infra/function-settings.ts';
import { type FunctionName } from '../../infra/registry.ts';
import { secretReadBudgetMs } from '../../functions/list-orders-paged/cursor-keys.ts';
import { dynamoDbBounds } from '../../shared/dynamo.ts';
import { maxListMs } from '../../functions/list-orders/list-cuts.ts';

const dynamoDbCall = dynamoDbBounds.callBudgetMs;

/** The longest chain of calls of each function, in milliseconds, each at its full deadline. */
const chains: Record<FunctionName, { readonly calls: readonly number[]; readonly why: string }> = {
  authorizer: { calls: [dynamoDbCall], why: "the key's GetItem (functions/authorizer/handler.ts)" },
  cancelOrder: { calls: [dynamoDbCall], why: 'the conditional UpdateItem (functions/cancel-order/handler.ts)' },
  listOrdersPaged: {
    calls: [secretReadBudgetMs, secretReadBudgetMs, dynamoDbCall],
    why: "the cursor keys' secret, read again for a cursor no key opens, then the page's Scan or Query; the next cursor is sealed with the keys just read (functions/list-orders-paged/handler.ts)",
  },
  listOrders: {
    calls: [dynamoDbCall, dynamoDbCall, dynamoDbCall, maxListMs, dynamoDbCall],
    why: "its lease (PutItem), the item count (DescribeTable), the first Scan page, the stream cut at its maximum duration at the latest, then the lease's release (functions/list-orders/handler.ts)",
  },
};

describe("each function's timeout", () => {
  it.each(Object.keys(chains) as FunctionName[])(
    'of %s lies above its longest chain of calls, each at its full deadline, and the safety margin',
    (name) => {
      const longestMs = chains[name].calls.reduce((sum, ms) => sum + ms, 0) + dynamoDbBounds.safetyMarginMs;
      expect(longestMs, chains[name].why).toBeLessThan(functionSettings[name].timeoutSeconds * 1000);
    },
  );

  it('covers every function of the service', () => {
    expect(Object.keys(chains).sort()).toEqual(Object.keys(functionSettings).sort());
  });
});
