/**
 * Creating, moving and revoking a key keeps its two sides in step: the keys table (what the
 * authorizer accepts) and, on a deployed stage, API Gateway (the API key holding the key's usage
 * identifier, and its usage plan). The one state to avoid is a key the authorizer accepts whose
 * usage identifier is in no plan: API Gateway would refuse every request of it. So the writes
 * are ordered for the authorizer to accept a key only once API Gateway knows it:
 *
 * - create: API key, then plan membership, then the table record last;
 * - revoke: the table first (the authorizer stops accepting), then API Gateway;
 * - move: out of the old plan, into the new one (API Gateway allows one plan per key and stage,
 *   so the key is in none for the moment between the two calls), then the table's tier.
 *
 * Each step is named; a failure says which one failed and what state it left. Running the same
 * move or revoke again finishes the work (every step finds what an earlier run did, by name); a
 * create that failed says how to remove what it left, since a new create makes a new key id.
 */
import { hashApiKey, keyIdOf } from '../../functions/authorizer/api-keys.ts';
import { createApiKey, findKeyById, generateApiKey, generateUsageKey, moveApiKey, revokeApiKey } from './key-store.ts';
import type { ApiKeyItem } from '../../functions/authorizer/api-keys.ts';
import type { TableRef } from '../../shared/dynamo.ts';
import { apiKeyName, usagePlanName } from '../names.ts';
import { type GatewayApiKey, type UsagePlanRef, type UsagePlans } from './usage-plans.ts';

/** Where a key lives: its table, and on a deployed stage its API Gateway side too. */
export type KeySides = {
  readonly table: TableRef;
  /** Absent locally (npm start has no API Gateway): only the table is written. */
  readonly gateway?: UsagePlans;
  readonly stage: string;
};

/** A step that failed: which, after what, and what is left. The message says it all. */
export class StepFailed extends Error {
  readonly step: string;
  constructor(message: string, step: string, cause: unknown) {
    super(message, { cause });
    this.step = step;
  }
}

type Step = { readonly name: string; readonly run: () => Promise<void> };

/**
 * Runs steps in order. On a failure: the command, the step (n of m) and its error, the steps done,
 * what state that leaves (`leftState` gets how many steps were done), and "run the same command again".
 */
const runSteps = async (
  command: string,
  steps: readonly Step[],
  leftState: (done: number) => string,
  next = 'Run the same command again to finish.',
): Promise<void> => {
  for (const [index, step] of steps.entries()) {
    try {
      await step.run();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const done = steps.slice(0, index).map((s) => s.name);
      throw new StepFailed(
        [
          `${command}: step ${index + 1} of ${steps.length} (${step.name}) failed: ${reason}.`,
          `Done: ${done.length === 0 ? 'nothing' : done.join('; ')}.`,
          `State: ${leftState(index)}`,
          next,
        ].join('\n'),
        step.name,
        error,
      );
    }
  }
};

/** Issues a key in a tier. The key itself is returned only here (printed once by the tool). */
export const createKey = async (
  sides: KeySides,
  options: { name: string; tier: string; prefix: string },
): Promise<{ key: string; item: ApiKeyItem }> => {
  const key = generateApiKey(options.prefix);
  const keyId = keyIdOf(hashApiKey(key));
  const usageKey = generateUsageKey();
  let result: { key: string; item: ApiKeyItem } | undefined;
  const record: Step = {
    name: 'record the key in the keys table',
    run: async () => {
      result = await createApiKey(sides.table, { name: options.name, prefix: options.prefix, key, tier: options.tier, usageKey });
    },
  };
  const { gateway } = sides;
  if (gateway === undefined) {
    await runSteps(`create ${keyId}`, [record], () => 'nothing was written; no key was issued.', 'Run create again for a new key.');
    return result!;
  }
  let apiKey: GatewayApiKey | undefined;
  let plan: UsagePlanRef | undefined;
  const name = apiKeyName(sides.stage, keyId);
  const planName = usagePlanName(sides.stage, options.tier);
  await runSteps(
    `create ${keyId}`,
    [
      { name: `find usage plan ${planName}`, run: async () => void (plan = await gateway.plan(options.tier)) },
      { name: `create API key ${name}`, run: async () => void (apiKey = await gateway.createKey(keyId, usageKey, options.name)) },
      { name: `add it to usage plan ${planName}`, run: async () => gateway.join(plan!, apiKey!) },
      record,
    ],
    (done) =>
      done === 0
        ? 'nothing was written; no key was issued.'
        : // Creating the API key may have succeeded though its answer was lost: it may be there.
          `no key was issued (the keys table has none, so the authorizer accepts nothing new), but API key ${name} ` +
          `${done === 1 ? 'may be' : 'is'} left in API Gateway, unused: remove it with \`npm run keys -- revoke ${keyId} --stage ${sides.stage}\`.`,
    // A new create makes a new key id: it cannot finish this one.
    'Then run create again for a new key (it does not reuse this one).',
  );
  return result!;
};

/** The record of an active key, or a message why there is none. */
const activeKey = async (table: TableRef, keyId: string): Promise<ApiKeyItem> => {
  const item = await findKeyById(table, keyId);
  if (item === undefined) throw new Error(`no key with id ${keyId} in ${table.tableName}`);
  if (item.revokedAt !== undefined) throw new Error(`key ${keyId} was revoked at ${item.revokedAt}: issue a new one`);
  return item;
};

/** Puts a key in another tier (and gives a key issued before usage plans its usage identifier). */
export const moveKey = async (sides: KeySides, keyId: string, tier: string): Promise<ApiKeyItem> => {
  const item = await activeKey(sides.table, keyId);
  const { gateway } = sides;
  let usageKey = item.usageKey ?? generateUsageKey();
  let moved: ApiKeyItem | undefined;
  const record: Step = {
    name: `record tier ${tier} in the keys table`,
    run: async () => void (moved = await moveApiKey(sides.table, item, { tier, usageKey })),
  };
  if (gateway === undefined) {
    await runSteps(`move ${keyId}`, [record], () => `the key is still in tier ${item.tier ?? 'default'}.`);
    return moved!;
  }
  const name = apiKeyName(sides.stage, keyId);
  const planName = usagePlanName(sides.stage, tier);
  let apiKey: GatewayApiKey | undefined;
  let plan: UsagePlanRef | undefined;
  await runSteps(
    `move ${keyId}`,
    [
      { name: `find usage plan ${planName}`, run: async () => void (plan = await gateway.plan(tier)) },
      {
        name: `find or create API key ${name}`,
        run: async () => {
          apiKey = await ensureApiKey(gateway, keyId, item, usageKey);
          usageKey = apiKey.value;
        },
      },
      {
        name: `take it out of the stage's other usage plans`,
        run: async () => {
          for (const other of (await gateway.plans({ keyId: apiKey!.id })).values())
            if (other.tier !== tier) await gateway.leave(other, apiKey!);
        },
      },
      { name: `add it to usage plan ${planName}`, run: async () => gateway.join(plan!, apiKey!) },
      record,
    ],
    (done) =>
      done <= 2
        ? `the key is still in its old plan and tier (${item.tier ?? 'default'}).`
        : done === 3
          ? `the key is in no usage plan: API Gateway refuses its requests (401) until the move is finished.`
          : `API Gateway applies tier ${tier}; the keys table still says ${item.tier ?? 'default'} (the local gateway and \`list\` read it).`,
  );
  return moved!;
};

/**
 * The API key of a key: the one an earlier run created (its value is then the usage identifier),
 * or a new one with the record's usage identifier (or, for a key issued before usage plans, a new one).
 */
const ensureApiKey = async (gateway: UsagePlans, keyId: string, item: ApiKeyItem, usageKey: string): Promise<GatewayApiKey> => {
  const existing = await gateway.findKey(keyId);
  if (existing === undefined) return gateway.createKey(keyId, usageKey, item.name);
  if (item.usageKey !== undefined && existing.value !== item.usageKey)
    throw new Error(
      `API key ${existing.name} holds another usage identifier than the keys table: delete API key ${existing.id} and run again`,
    );
  return existing;
};

/**
 * Revokes a key: the table first (the authorizer refuses it once its cached Allow expires), then
 * its API key leaves every plan and is deleted (a cached Allow then meets INVALID_API_KEY: 401).
 * A key id with no record but a left-over API key (a create that failed halfway) is cleaned up.
 */
export const revokeKey = async (
  sides: KeySides,
  keyId: string,
): Promise<{ readonly revoked: ApiKeyItem | undefined; readonly apiKeyRemoved: string | undefined }> => {
  let revoked: ApiKeyItem | undefined;
  const record: Step = {
    name: 'mark the key revoked in the keys table',
    run: async () => void (revoked = await revokeApiKey(sides.table, keyId)),
  };
  const { gateway } = sides;
  if (gateway === undefined) {
    await runSteps(`revoke ${keyId}`, [record], () => 'the key is still active.');
    return { revoked, apiKeyRemoved: undefined };
  }
  const name = apiKeyName(sides.stage, keyId);
  let apiKey: GatewayApiKey | undefined;
  await runSteps(
    `revoke ${keyId}`,
    [
      record,
      {
        name: `take API key ${name} out of every usage plan`,
        run: async () => {
          apiKey = await gateway.findKey(keyId);
          if (apiKey !== undefined)
            for (const plan of (await gateway.plans({ keyId: apiKey.id })).values()) await gateway.leave(plan, apiKey);
        },
      },
      { name: `delete API key ${name}`, run: async () => (apiKey === undefined ? undefined : gateway.deleteKey(apiKey)) },
    ],
    (done) =>
      done === 0
        ? 'the key is still active.'
        : `the keys table has it revoked (the authorizer refuses it once its cached Allow expires); API key ${name} is still in API Gateway.`,
  );
  return { revoked, apiKeyRemoved: apiKey?.name };
};
