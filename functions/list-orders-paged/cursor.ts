/**
 * The v2 list's page cursor: where the next page starts, sealed so that a client can neither read
 * nor forge it (docs/decisions.md#v2-list-cursors). AES-256-GCM, with a key derived from the
 * stage's cursor secret (HKDF-SHA256): the encryption hides the DynamoDB key (table key attributes
 * and values), the tag makes any change detectable. Layout, then base64url:
 *
 *   version (1 byte) | IV (12 bytes) | ciphertext | GCM tag (16 bytes)
 *
 * The version byte is authenticated too (additional data). The plaintext is JSON: the stage it was
 * made for, a hash of the request's filters and part, when it was issued, and the DynamoDB key.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { NumberValue } from '@aws-sdk/lib-dynamodb';

export const cursorVersion = 1;

/** A cursor older than this answers 400 `cursor_expired`: a rotated-out key is dropped after it. */
export const cursorMaxAgeSeconds = 24 * 60 * 60;

/** The longest cursor a request may carry; a real one is about 150 characters. */
export const cursorMaxLength = 1024;

/** The stage's cursor keys: `current` seals, both open (a rotation moves the old one to `previous`). */
export type CursorSecrets = { readonly current: string; readonly previous?: string | undefined };

/** A DynamoDB key as the document client hands it back (numbers as NumberValue, exact). */
export type StartKey = Record<string, unknown>;

/** Why a cursor is refused; each is its own 400 code. */
export type CursorProblem = 'invalid_cursor' | 'cursor_expired' | 'cursor_mismatch';

export class CursorError extends Error {
  readonly problem: CursorProblem;
  constructor(problem: CursorProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}

const ivBytes = 12;
const tagBytes = 16;

/** The AES key of one secret: HKDF-SHA256, bound to this use and version. */
const keyOf = (secret: string): Buffer => Buffer.from(hkdfSync('sha256', secret, 'store-orders', `v2 list cursor v${cursorVersion}`, 32));

/** A short, stable hash of what a cursor is bound to (filters and part), order of keys fixed by the caller. */
export const bindingHash = (binding: Readonly<Record<string, string | number | undefined>>): string =>
  createHash('sha256').update(JSON.stringify(binding)).digest('base64url').slice(0, 22);

/** Key values kept exact through JSON: a number as `{"n": "<digits>"}`, a string as `{"s": "…"}`. */
const encodeKey = (key: StartKey): Record<string, { n: string } | { s: string }> =>
  Object.fromEntries(
    Object.entries(key).map(([name, value]) => {
      if (value instanceof NumberValue) return [name, { n: value.value }];
      if (typeof value === 'string') return [name, { s: value }];
      throw new Error(`cursor: unexpected key attribute type for ${name}`);
    }),
  );

const decodeKey = (encoded: unknown): StartKey | undefined => {
  if (typeof encoded !== 'object' || encoded === null || Array.isArray(encoded)) return undefined;
  const key: StartKey = {};
  for (const [name, value] of Object.entries(encoded)) {
    if (typeof value !== 'object' || value === null) return undefined;
    if ('n' in value && typeof value.n === 'string' && /^-?[0-9]+(\.[0-9]+)?$/.test(value.n)) key[name] = NumberValue.from(value.n);
    else if ('s' in value && typeof value.s === 'string') key[name] = value.s;
    else return undefined;
  }
  return Object.keys(key).length === 0 ? undefined : key;
};

export type CursorContent = {
  readonly stage: string;
  /** bindingHash of the request's filters and part. */
  readonly binding: string;
  readonly startKey: StartKey;
};

/** A sealed cursor (base64url) for the page after `startKey`. */
export const sealCursor = (secrets: CursorSecrets, content: CursorContent, now: Date = new Date()): string => {
  const header = Buffer.from([cursorVersion]);
  const iv = randomBytes(ivBytes);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secrets.current), iv);
  cipher.setAAD(header);
  const plaintext = JSON.stringify({
    s: content.stage,
    b: content.binding,
    t: Math.floor(now.getTime() / 1000),
    k: encodeKey(content.startKey),
  });
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([header, iv, sealed, cipher.getAuthTag()]).toString('base64url');
};

const open = (secret: string, header: Buffer, iv: Buffer, sealed: Buffer, tag: Buffer): string | undefined => {
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), iv, { authTagLength: tagBytes });
    decipher.setAAD(header);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
};

/** True when the text could be a cursor of this version at all (no key needed): tells a garbled cursor from an unknown key. */
const split = (cursor: string) => {
  if (cursor.length > cursorMaxLength || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.length < 1 + ivBytes + tagBytes + 2 || bytes[0] !== cursorVersion) return undefined;
  return {
    header: bytes.subarray(0, 1),
    iv: bytes.subarray(1, 1 + ivBytes),
    sealed: bytes.subarray(1 + ivBytes, bytes.length - tagBytes),
    tag: bytes.subarray(bytes.length - tagBytes),
  };
};

/**
 * The start key a cursor carries, once it is proven to be this stage's, for this binding and young
 * enough; otherwise a CursorError naming the problem. `undefined` from the key lookup means no
 * secret opened it (forged, tampered, another stage's, or a key rotated out).
 */
export const openCursor = (
  secrets: CursorSecrets,
  cursor: string,
  expected: { readonly stage: string; readonly binding: string },
  now: Date = new Date(),
): StartKey => {
  const parts = split(cursor);
  if (parts === undefined) throw new CursorError('invalid_cursor', 'cursor is not a cursor of this API: pass nextCursor unchanged.');
  const keys = [secrets.current, ...(secrets.previous === undefined ? [] : [secrets.previous])];
  let plaintext: string | undefined;
  for (const secret of keys) {
    plaintext = open(secret, parts.header, parts.iv, parts.sealed, parts.tag);
    if (plaintext !== undefined) break;
  }
  if (plaintext === undefined)
    throw new CursorError('invalid_cursor', 'cursor was not issued by this API (or was altered): pass nextCursor unchanged.');
  const content = parseContent(plaintext);
  if (content === undefined || content.s !== expected.stage)
    throw new CursorError('invalid_cursor', 'cursor was not issued by this stage of the API.');
  const ageSeconds = Math.floor(now.getTime() / 1000) - content.t;
  if (ageSeconds > cursorMaxAgeSeconds)
    throw new CursorError(
      'cursor_expired',
      `cursor is older than ${cursorMaxAgeSeconds / 3600} hours: start the read again without a cursor.`,
    );
  if (content.b !== expected.binding)
    throw new CursorError(
      'cursor_mismatch',
      'cursor was made for other status, shipDateFrom, shipDateTo, part or parts values: send the same ones.',
    );
  const key = decodeKey(content.k);
  if (key === undefined) throw new CursorError('invalid_cursor', 'cursor is not a cursor of this API: pass nextCursor unchanged.');
  return key;
};

const parseContent = (plaintext: string): { s: unknown; b: unknown; t: number; k: unknown } | undefined => {
  try {
    const value: unknown = JSON.parse(plaintext);
    if (typeof value !== 'object' || value === null) return undefined;
    const { s, b, t, k } = value as Record<string, unknown>;
    return typeof t === 'number' ? { s, b, t, k } : undefined;
  } catch {
    return undefined;
  }
};

/** The smallest secret a stage may use: 32 characters of a random string (256 bits of base64). */
export const cursorSecretMinLength = 32;

/** Reads the stage's cursor secret JSON, `{"current": "…", "previous": "…"}` (previous optional). */
export const parseCursorSecrets = (text: string): CursorSecrets => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('cursor secret: not JSON');
  }
  const { current, previous } = (value ?? {}) as Record<string, unknown>;
  const usable = (secret: unknown) => typeof secret === 'string' && secret.length >= cursorSecretMinLength;
  if (!usable(current)) throw new Error(`cursor secret: "current" must be a string of ${cursorSecretMinLength}+ characters`);
  if (previous !== undefined && !usable(previous))
    throw new Error(`cursor secret: "previous", when set, must be a string of ${cursorSecretMinLength}+ characters`);
  return { current: current as string, previous: previous as string | undefined };
};
