import { describe, expect, it } from 'vitest';
import { functionEnv, readConfig } from '../../shared/config.ts';

/** shared/config.ts runs on zod/mini, which has no messages of its own: shared/zod.ts gives it zod's English ones. */
describe('a function configuration that cannot be read', () => {
  it('fails with every problem named in English: a missing variable, and a setting out of its bounds', () => {
    expect(() => readConfig(functionEnv({ ORDERS_TABLE: true, SCAN_SEGMENTS: true }), { SCAN_SEGMENTS: '0' })).toThrow(
      'Invalid configuration: ORDERS_TABLE: Invalid input: expected string, received undefined; SCAN_SEGMENTS: must be a whole number from 1 to 64',
    );
  });

  it('reads only the variables the function picks, with their defaults', () => {
    expect(readConfig(functionEnv({ ORDERS_TABLE: true, SCAN_SEGMENTS: true }), { ORDERS_TABLE: 'orders', API_KEYS_TABLE: '!' })).toEqual({
      ORDERS_TABLE: 'orders',
      SCAN_SEGMENTS: 4,
    });
  });
});
