import { describe, expect, it } from 'vitest';
import { functionSettings } from '../../infra/function-settings.ts';
import { callDeadline, dynamoDbBounds } from '../../shared/dynamo.ts';

const caller = (remainingMs: number) => ({ getRemainingTimeInMillis: () => remainingMs });
const abortsWithin = async (signal: AbortSignal, ms: number) => {
  await new Promise((resolve) => setTimeout(resolve, ms));
  return signal.aborted;
};

describe('the deadline of a DynamoDB call', () => {
  it('gives each call the per-attempt request timeout and a signal of its own', () => {
    const deadline = callDeadline(caller(10_000));
    const first = deadline();
    const second = deadline();
    expect(first.requestTimeout).toBe(dynamoDbBounds.requestTimeoutMs);
    expect(first.abortSignal).not.toBe(second.abortSignal);
    expect(first.abortSignal.aborted).toBe(false);
  });

  it("ends sooner than the call budget when the caller's remaining time less the margin is shorter", async () => {
    const { abortSignal } = callDeadline(caller(dynamoDbBounds.safetyMarginMs + 50))();
    expect(abortSignal.aborted).toBe(false);
    expect(await abortsWithin(abortSignal, 200)).toBe(true);
  });

  it('is over before the call starts when the caller has no more than the margin left', () => {
    const { abortSignal } = callDeadline(caller(dynamoDbBounds.safetyMarginMs))();
    expect(abortSignal.aborted).toBe(true);
    expect((abortSignal.reason as Error).name).toBe('TimeoutError');
  });

  it.each(['authorizer', 'cancelOrder'] as const)('ends, margin included, well inside the timeout of %s (one DynamoDB call)', (name) => {
    expect(dynamoDbBounds.callBudgetMs + dynamoDbBounds.safetyMarginMs).toBeLessThan(functionSettings[name].timeoutSeconds * 1000);
  });
});
