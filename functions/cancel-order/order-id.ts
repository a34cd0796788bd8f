import { apiError } from '../../shared/errors.ts';
import { inInt64Range } from '../../shared/schemas.ts';

/**
 * Reads the `orderId` path parameter as an int64 without ever making it a JS number (which
 * would lose digits above 2^53 - 1). Returns the canonical decimal text ("007" → "7").
 */
export const parseOrderId = (raw: string | undefined | null): string => {
  // The length cap answers absurd inputs before BigInt is asked to read them.
  if (raw == null || raw.length > 64 || !/^-?[0-9]+$/.test(raw)) throw apiError('invalid_order_id');
  const value = BigInt(raw);
  if (!inInt64Range(value)) throw apiError('invalid_order_id');
  return value.toString();
};
