import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CursorError, type CursorSecrets, openCursor, parseCursorSecrets, sealCursor, type StartKey } from './cursor.ts';
import { toServiceError } from '../../shared/dynamo.ts';
import { apiError } from '../../shared/errors.ts';
import type { ListQuery } from './list-query.ts';
import { logger } from '../../shared/observability.ts';

/** The secret's name on a stage: the stack creates it and grants the v2 list function read access to exactly this. */
export const cursorSecretName = (stage: string): string => `store-orders/${stage}/cursor-keys`;

/**
 * How long a function keeps the keys it read: after a rotation every instance signs with the new
 * key within this time. A cursor no key opens makes the function read the secret again, at most
 * once per `refreshOnFailureMs`, so a cursor signed by an instance that already rotated opens here too.
 */
export const cursorKeysTtlMs = 5 * 60_000;
export const refreshOnFailureMs = 60_000;

/**
 * The longest one read of the secret may take, its SDK retries included: Secrets Manager answers in
 * milliseconds. A page may read it twice (its keys, then once more for a cursor no key opens) before
 * its DynamoDB call: the v2 function's timeout covers all three (test/unit/timeouts.test.ts).
 */
export const secretReadBudgetMs = 3_000;

export type CursorKeySource = { readonly secretId: string } | { readonly secrets: string };

/** The stage's cursor keys, read from Secrets Manager when first needed and kept for cursorKeysTtlMs. */
const cursorKeyRing = (source: CursorKeySource, now: () => number = () => performance.now()) => {
  const client = 'secretId' in source ? new SecretsManagerClient({ maxAttempts: 3 }) : undefined;
  let held: { keys: CursorSecrets; readAt: number } | undefined;
  const read = async (): Promise<CursorSecrets> => {
    if (!('secretId' in source)) return parseCursorSecrets(source.secrets);
    let text: string | undefined;
    try {
      text = (
        await client!.send(new GetSecretValueCommand({ SecretId: source.secretId }), {
          abortSignal: AbortSignal.timeout(secretReadBudgetMs),
        })
      ).SecretString;
    } catch (error) {
      throw toServiceError(error);
    }
    return parseCursorSecrets(text ?? '');
  };
  return {
    /** The keys, read again once they are older than the TTL. */
    async keys(): Promise<CursorSecrets> {
      if (held === undefined || now() - held.readAt > cursorKeysTtlMs) held = { keys: await read(), readAt: now() };
      return held.keys;
    },
    /** Reads the secret again, unless it was read within refreshOnFailureMs; true when it did. */
    async refresh(): Promise<boolean> {
      if (held !== undefined && now() - held.readAt < refreshOnFailureMs) return false;
      held = { keys: await read(), readAt: now() };
      return true;
    },
  };
};

/**
 * The v2 list's cursors, its one entry point: the request's cursor opened (a refused one is its own
 * 400) and the next page's sealed, with the stage's keys and the binding the query was parsed with.
 */
export const pageCursors = (stage: string, source: CursorKeySource) => {
  const ring = cursorKeyRing(source);
  /** A cursor no key opens makes the keys be read again once (a rotation). */
  const open = async (cursor: string, binding: string): Promise<StartKey> => {
    const attempt = async () => openCursor(await ring.keys(), cursor, { stage, binding });
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof CursorError && error.problem === 'invalid_cursor') || !(await ring.refresh())) throw error;
      return await attempt();
    }
  };
  return {
    /** The start key of the request's cursor; undefined without one. */
    async open(query: ListQuery): Promise<StartKey | undefined> {
      if (query.cursor === undefined) return undefined;
      try {
        return await open(query.cursor, query.binding);
      } catch (error) {
        if (!(error instanceof CursorError)) throw error;
        logger.info('cursor refused', { problem: error.problem });
        throw apiError(error.problem, error.message);
      }
    },
    /** The cursor of the page that starts at `nextKey`; undefined after the last page. */
    async seal(query: ListQuery, nextKey: StartKey | undefined): Promise<string | undefined> {
      return nextKey === undefined ? undefined : sealCursor(await ring.keys(), { stage, binding: query.binding, startKey: nextKey });
    },
  };
};
