/**
 * When the pre-traffic hook expects a filtered v2 page to answer 200: DynamoDB answers Query on an
 * index that is ACTIVE, or UPDATING (a settings change of an index already built); not while it is
 * CREATING (backfilled) or DELETING, nor when it is absent (GlobalSecondaryIndexDescription).
 */
import { describe, expect, it } from 'vitest';
import { statusIndex, statusIndexQueryable } from '../../shared/status-index.ts';

const table = (...indexes: { IndexName: string; IndexStatus: string }[]) => ({ GlobalSecondaryIndexes: indexes });

describe('statusIndexQueryable', () => {
  it('is true for the status index ACTIVE or UPDATING', () => {
    expect(statusIndexQueryable(table({ IndexName: statusIndex.name, IndexStatus: 'ACTIVE' }))).toBe(true);
    expect(statusIndexQueryable(table({ IndexName: statusIndex.name, IndexStatus: 'UPDATING' }))).toBe(true);
  });

  it('is false while it is built or deleted, when it is absent, and for another index', () => {
    expect(statusIndexQueryable(table({ IndexName: statusIndex.name, IndexStatus: 'CREATING' }))).toBe(false);
    expect(statusIndexQueryable(table({ IndexName: statusIndex.name, IndexStatus: 'DELETING' }))).toBe(false);
    expect(statusIndexQueryable(table())).toBe(false);
    expect(statusIndexQueryable({})).toBe(false);
    expect(statusIndexQueryable(undefined)).toBe(false);
    expect(statusIndexQueryable(table({ IndexName: 'other-index', IndexStatus: 'ACTIVE' }))).toBe(false);
  });
});
