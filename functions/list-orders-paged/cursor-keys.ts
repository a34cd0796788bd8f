import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type CursorSecrets, parseCursorSecrets } from './cursor.ts';
import { toServiceError } from '../../shared/dynamo.ts';

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
export const cursorKeyRing = (source: CursorKeySource, now: () => number = () => performance.now()) => {
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
