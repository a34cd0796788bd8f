/**
 * The stage's canary key: an ordinary API key in tier `canary` (shared/probes.ts `canaryTier`), issued by `npm run keys -- canary`
 * and kept in Secrets Manager, never in a template or the repository. The Synthetics canary
 * (functions/canary/handler.ts) and the pre-traffic hook (functions/pre-traffic-hook/handler.ts) read it.
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { z } from 'zod';

/** The secret's name on a stage: the stack grants the canary and the hook read access to exactly this. */
export const canaryKeySecretName = (stage: string): string => `store-orders/${stage}/canary-key`;

/** The secret's value: the key, its id, and its usage identifier in API Gateway (what the authorizer must return). */
export const canaryKeySecret = z.object({ key: z.string().min(1), keyId: z.string().min(1), usageIdentifierKey: z.string().min(1) });
export type CanaryKey = z.infer<typeof canaryKeySecret>;

/** The canary key a secret holds (the canary, the hook and the key tool all read it this way). */
export const readCanaryKey = async (secrets: SecretsManagerClient, secretId: string): Promise<CanaryKey> => {
  const secret = await secrets.send(new GetSecretValueCommand({ SecretId: secretId }));
  return canaryKeySecret.parse(JSON.parse(secret.SecretString ?? ''));
};
