import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { acquireListLease, maxLeaseSeconds, releaseListLease } from '../../functions/list-orders/list-leases.ts';
import { createTestTables } from '../lib/local-api.ts';

const inAMinute = () => new Date(Date.now() + 60_000);

describe('list leases (a conditional PutItem per slot in DynamoDB Local)', () => {
  it('gives exactly `slots` of many concurrent requests of one key a lease', async () => {
    const { listLeases } = await createTestTables();
    const taken = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        acquireListLease(listLeases, { keyId: 'key_a', holder: `request-${i}`, slots: 3, expiresAt: inAMinute() }),
      ),
    );
    const held = taken.filter((lease) => lease !== undefined);
    expect(held).toHaveLength(3);
    expect(new Set(held.map((lease) => lease.lease))).toEqual(new Set(['key_a#0', 'key_a#1', 'key_a#2']));
  });

  it("does not count one key's leases against another key", async () => {
    const { listLeases } = await createTestTables();
    expect(await acquireListLease(listLeases, { keyId: 'key_a', holder: 'r1', slots: 1, expiresAt: inAMinute() })).toBeDefined();
    expect(await acquireListLease(listLeases, { keyId: 'key_a', holder: 'r2', slots: 1, expiresAt: inAMinute() })).toBeUndefined();
    expect(await acquireListLease(listLeases, { keyId: 'key_b', holder: 'r3', slots: 1, expiresAt: inAMinute() })).toBeDefined();
  });

  it('frees the slot when the lease is given back, and only its holder can give it back', async () => {
    const { listLeases } = await createTestTables();
    const lease = (await acquireListLease(listLeases, { keyId: 'key_a', holder: 'r1', slots: 1, expiresAt: inAMinute() }))!;
    await releaseListLease(listLeases, { lease: lease.lease, holder: 'someone-else' });
    expect(await acquireListLease(listLeases, { keyId: 'key_a', holder: 'r2', slots: 1, expiresAt: inAMinute() })).toBeUndefined();
    await releaseListLease(listLeases, lease);
    const { Items } = await listLeases.client.send(new ScanCommand({ TableName: listLeases.tableName }));
    expect(Items).toEqual([]);
    expect(await acquireListLease(listLeases, { keyId: 'key_a', holder: 'r2', slots: 1, expiresAt: inAMinute() })).toBeDefined();
  });

  it('takes over a lease whose list was stopped without giving it back, once it has expired', async () => {
    const { listLeases } = await createTestTables();
    const past = Math.floor(Date.now() / 1000) - 1;
    await listLeases.client.send(
      new PutCommand({ TableName: listLeases.tableName, Item: { lease: 'key_a#0', holder: 'gone', expiresAt: past } }),
    );
    const lease = await acquireListLease(listLeases, { keyId: 'key_a', holder: 'r1', slots: 1, expiresAt: inAMinute() });
    expect(lease).toEqual({ lease: 'key_a#0', holder: 'r1' });
    const { Item } = await listLeases.client.send(new GetCommand({ TableName: listLeases.tableName, Key: { lease: 'key_a#0' } }));
    expect(Item).toMatchObject({ holder: 'r1' });
    // The expired holder giving it back late changes nothing.
    await releaseListLease(listLeases, { lease: 'key_a#0', holder: 'gone' });
    expect(await acquireListLease(listLeases, { keyId: 'key_a', holder: 'r2', slots: 1, expiresAt: inAMinute() })).toBeUndefined();
  });

  it('does not believe a lease that claims to last longer than any list can (maxLeaseSeconds), nor one without a numeric expiry', async () => {
    const { listLeases } = await createTestTables();
    const now = Math.floor(Date.now() / 1000);
    const forged = [
      { lease: 'key_a#0', holder: 'forged', expiresAt: 9_999_999_999 },
      { lease: 'key_b#0', holder: 'forged', expiresAt: now + maxLeaseSeconds + 5 },
      { lease: 'key_c#0', holder: 'forged', expiresAt: 'never' },
      { lease: 'key_d#0', holder: 'forged' },
    ];
    for (const Item of forged) await listLeases.client.send(new PutCommand({ TableName: listLeases.tableName, Item }));
    for (const keyId of ['key_a', 'key_b', 'key_c', 'key_d'])
      expect(await acquireListLease(listLeases, { keyId, holder: 'r1', slots: 1, expiresAt: inAMinute() })).toEqual({
        lease: `${keyId}#0`,
        holder: 'r1',
      });
    // A real list's lease, however long its function's time, stays within the bound and is respected.
    await listLeases.client.send(
      new PutCommand({
        TableName: listLeases.tableName,
        Item: { lease: 'key_e#0', holder: 'running', expiresAt: now + maxLeaseSeconds - 5 },
      }),
    );
    expect(await acquireListLease(listLeases, { keyId: 'key_e', holder: 'r1', slots: 1, expiresAt: inAMinute() })).toBeUndefined();
    // And none is written beyond it, whatever the caller asks.
    const lease = await acquireListLease(listLeases, {
      keyId: 'key_f',
      holder: 'r1',
      slots: 1,
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    const { Item } = await listLeases.client.send(new GetCommand({ TableName: listLeases.tableName, Key: { lease: lease!.lease } }));
    expect(Number(Item!.expiresAt)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + maxLeaseSeconds);
  });
});
