import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  bindingHash,
  CursorError,
  cursorMaxAgeSeconds,
  openCursor,
  parseCursorSecrets,
  sealCursor,
  type StartKey,
} from '../../functions/list-orders-paged/cursor.ts';

const secrets = { current: 'a'.repeat(32) + '-current-secret-of-the-stage' };
const binding = bindingHash({ status: 'pending' });
const expected = { stage: 'staging', binding };
const key: StartKey = { id: NumberValue.from('9223372036854775807'), status: 'pending' };
const now = new Date('2026-11-25T12:00:00Z');
const seal = (content: Partial<Parameters<typeof sealCursor>[1]> = {}, at = now, with_ = secrets) =>
  sealCursor(with_, { stage: 'staging', binding, startKey: key, ...content }, at);

const problemOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof CursorError) return error.problem;
    throw error;
  }
  return 'opened';
};

describe('the v2 list cursor', () => {
  it('carries the DynamoDB key back exactly, int64 digits above 2^53 included, as base64url text', () => {
    const cursor = seal();
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const opened = openCursor(secrets, cursor, expected, now);
    expect(opened.id).toBeInstanceOf(NumberValue);
    expect((opened.id as NumberValue).value).toBe('9223372036854775807');
    expect(opened.status).toBe('pending');
  });

  it('reveals neither key attribute names nor values, and differs each time it is sealed', () => {
    const cursor = seal();
    const bytes = Buffer.from(cursor, 'base64url').toString('latin1');
    for (const readable of ['9223372036854775807', 'pending', '"id"', 'status', 'staging']) expect(bytes).not.toContain(readable);
    expect(seal()).not.toBe(cursor);
  });

  it('refuses any altered byte as invalid_cursor', () => {
    const bytes = Buffer.from(seal(), 'base64url');
    for (let at = 0; at < bytes.length; at += 1) {
      const altered = Buffer.from(bytes);
      altered[at] = altered[at]! ^ 0x01;
      expect(problemOf(() => openCursor(secrets, altered.toString('base64url'), expected, now))).toBe('invalid_cursor');
    }
  });

  it.each(['', '!!!', 'abc', 'A'.repeat(2000), `${seal()}=`])('refuses %j as invalid_cursor', (text) => {
    expect(problemOf(() => openCursor(secrets, text, expected, now))).toBe('invalid_cursor');
  });

  it('refuses a cursor of another stage or another secret as invalid_cursor', () => {
    expect(problemOf(() => openCursor(secrets, seal({ stage: 'production' }), expected, now))).toBe('invalid_cursor');
    const other = { current: 'b'.repeat(40) };
    expect(problemOf(() => openCursor(secrets, seal({}, now, other), expected, now))).toBe('invalid_cursor');
  });

  it('opens a cursor sealed with the previous key after a rotation, and with the new one', () => {
    const rotated = { current: 'c'.repeat(40), previous: secrets.current };
    expect(problemOf(() => openCursor(rotated, seal(), expected, now))).toBe('opened');
    expect(problemOf(() => openCursor(rotated, seal({}, now, rotated), expected, now))).toBe('opened');
    expect(problemOf(() => openCursor({ current: 'c'.repeat(40) }, seal(), expected, now))).toBe('invalid_cursor');
  });

  it(`expires ${cursorMaxAgeSeconds} s after it was issued (cursor_expired)`, () => {
    const issued = new Date(now.getTime() - cursorMaxAgeSeconds * 1000);
    expect(problemOf(() => openCursor(secrets, seal({}, issued), expected, now))).toBe('opened');
    const older = new Date(issued.getTime() - 1000);
    expect(problemOf(() => openCursor(secrets, seal({}, older), expected, now))).toBe('cursor_expired');
  });

  it('refuses a cursor made for other filters or another part as cursor_mismatch', () => {
    const other = { stage: 'staging', binding: bindingHash({ status: 'shipped' }) };
    expect(problemOf(() => openCursor(secrets, seal(), other, now))).toBe('cursor_mismatch');
  });

  it('reads the stage secret as {"current", "previous"} and refuses short or missing keys', () => {
    expect(parseCursorSecrets(JSON.stringify({ current: 'x'.repeat(32) }))).toEqual({ current: 'x'.repeat(32) });
    expect(() => parseCursorSecrets(JSON.stringify({ current: 'short' }))).toThrow(/current/);
    expect(() => parseCursorSecrets(JSON.stringify({ current: 'x'.repeat(32), previous: 7 }))).toThrow(/previous/);
    expect(() => parseCursorSecrets('not json')).toThrow(/JSON/);
  });
});
