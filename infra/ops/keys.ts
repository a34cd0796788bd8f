/**
 * `npm run keys -- <create|list|move|revoke> …`: issues, lists, moves between limit tiers and
 * revokes API keys. Only the SHA-256 hash of a key is stored; a new key is printed once, here,
 * and never again. On a deployed stage each command keeps API Gateway in step with the table
 * (the key's API key and usage plan: infra/ops/key-lifecycle.ts); locally only the table is written.
 *
 * Target: the running `npm start` by default (the state file it writes, .local/npm-start.json);
 * DYNAMODB_ENDPOINT / API_KEYS_TABLE or `--endpoint` / `--table` name another local one, and
 * without any of these it tries DynamoDB Local on 127.0.0.1:8000, table `api-keys`.
 * `--stage staging|production` targets a deployed stage's table (AWS credentials from the
 * usual SDK chain); `--table` and `--endpoint` override it too. A failure names the target tried.
 */
import { parseArgs } from 'node:util';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import {
  CreateSecretCommand,
  PutSecretValueCommand,
  ResourceNotFoundException as SecretNotFound,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { listApiKeys } from './key-store.ts';
import { tableName } from '../../shared/config.ts';
import { createDocumentClient } from '../../shared/dynamo.ts';
import { canaryKeySecretName, readCanaryKey } from '../../shared/canary-key.ts';
import { canaryTier } from '../../shared/probes.ts';
import { createKey, type KeySides, moveKey, revokeKey, StepFailed } from './key-lifecycle.ts';
import { type LocalState, localStateFile, readLocalState } from '../local/local-state.ts';
import { localStage, type StageName, stages } from '../stage-config.ts';
import { UsagePlans } from './usage-plans.ts';

const usage = `Usage: npm run keys -- <command> [options]

Commands:
  create --name <name> [--tier <tier>]  issue a new key in a limit tier (default: the target's default tier);
                                        printed once, only its hash is stored
  list                                  show every key: id, created, tier, active or revoked, name
  move <keyId> --tier <tier>            put a key in another limit tier
  adopt [--tier <tier>]                 give every active key issued before usage plans its usage
                                        identifier and plan (default: the default tier); run it
                                        right after the first deploy with usage plans
  revoke <keyId>                        revoke a key (takes effect within the authorizer cache TTL)
  canary --stage <stage>                issue the stage's canary key (tier canary) into Secrets Manager
                                        (${canaryKeySecretName('<stage>')}), never printed, and revoke the one
                                        it replaces: the Synthetics canary and the pre-traffic hook read it

Tiers: ${Object.keys(localStage.tiers).join(', ')} locally; ${Object.entries(stages)
  .map(([name, config]) => `${Object.keys(config.tiers).join(', ')} on ${name}`)
  .join('; ')}. On a stage, create, move and revoke
also write the key's API key and usage plan in API Gateway; a command that fails halfway says what
it left and is finished by running it again.

Target (default: the running npm start, found through ${localStateFile()}):
  --stage <staging|production>  a deployed stage's keys table (needs AWS credentials)
  --table <name>                the keys table (or API_KEYS_TABLE; default for local: ${localStage.apiKeysTableName})
  --endpoint <url>              a DynamoDB endpoint (or DYNAMODB_ENDPOINT; default for local: http://127.0.0.1:${localStage.dynamoDbPort})
  --region <region>             AWS region (default: the SDK's, e.g. AWS_REGION)`;

class UsageError extends Error {}

type Target = {
  /** A deployed stage: API Gateway is written too. */
  stage?: StageName;
  tiers: readonly string[];
  defaultTier: string;
  tableName: string;
  endpoint: string | undefined;
  region: string | undefined;
  keyPrefix: string;
  label: string;
  /** How the target was chosen and how to choose another, for messages when it fails. */
  hint: string;
  /** The running npm start this target was read from, if any. */
  running?: LocalState;
};

type TargetOptions = { stage?: string | undefined; table?: string | undefined; endpoint?: string | undefined; region?: string | undefined };

const pointElsewhere = 'name the target with --endpoint <url> --table <name> (or DYNAMODB_ENDPOINT and API_KEYS_TABLE), or --stage';

export const resolveTarget = (values: TargetOptions, env: NodeJS.ProcessEnv = process.env): Target => {
  const { stage } = values;
  if (stage !== undefined && !(stage in stages))
    throw new UsageError(`--stage must be one of ${Object.keys(stages).join(', ')}; got "${stage}"`);
  const deployed = stage === undefined ? undefined : stages[stage as StageName];
  // Nothing names a target: the running npm start, wherever it put its DynamoDB and tables.
  const named = [values.stage, values.table, values.endpoint, env.DYNAMODB_ENDPOINT, env.API_KEYS_TABLE].some(
    (v) => v !== undefined && v !== '',
  );
  const running = named ? undefined : readLocalState(localStateFile(env));
  const table = values.table ?? deployed?.apiKeysTableName ?? (env.API_KEYS_TABLE || running?.apiKeysTable) ?? localStage.apiKeysTableName;
  const parsedTable = tableName.safeParse(table);
  if (!parsedTable.success) throw new UsageError(`table name "${table}" ${parsedTable.error.issues[0]?.message}`);
  const endpoint =
    values.endpoint ??
    (deployed === undefined
      ? ((env.DYNAMODB_ENDPOINT || running?.dynamoDbEndpoint) ?? `http://127.0.0.1:${localStage.dynamoDbPort}`)
      : undefined);
  if (endpoint !== undefined && !URL.canParse(endpoint))
    throw new UsageError(`--endpoint must be a URL such as http://127.0.0.1:8000; got "${endpoint}"`);
  const hint =
    deployed !== undefined
      ? `the ${deployed.stage} stage's table; check that the stage is deployed and --region is the stack's ApiKeysTableRegion`
      : running !== undefined
        ? `the running npm start (pid ${running.pid}, from ${localStateFile(env)}); to use another, ${pointElsewhere}`
        : named
          ? `as named by the options and environment; to use another, ${pointElsewhere}`
          : `the default: no running npm start was found in ${localStateFile(env)}. Start \`npm start\` first, or ${pointElsewhere}`;
  return {
    ...(deployed === undefined ? {} : { stage: deployed.stage }),
    tiers: Object.keys(deployed?.tiers ?? localStage.tiers),
    defaultTier: deployed?.defaultTier ?? localStage.defaultTier,
    tableName: table,
    endpoint,
    region: values.region,
    keyPrefix: deployed?.keyPrefix ?? localStage.keyPrefix,
    label: deployed !== undefined ? deployed.stage : running !== undefined ? `the running npm start, ${endpoint}` : `local, ${endpoint}`,
    hint,
    ...(running === undefined ? {} : { running }),
  };
};

/** A DynamoDB failure as a message naming the target tried and how to choose another. */
const describeFailure = (error: unknown, target: Target): string => {
  // A step of a command failed: its message already says which, what is left, and what to do.
  if (error instanceof StepFailed) return `${error.message}\n(${target.label})`;
  const where = `table ${target.tableName} at ${target.endpoint ?? `AWS${target.region === undefined ? '' : ` ${target.region}`}`}`;
  if (error instanceof ResourceNotFoundException) return `${where} does not exist (${target.hint})`;
  if ((error as { code?: string }).code === 'ECONNREFUSED') return `cannot reach DynamoDB for ${where} (${target.hint})`;
  return `${error instanceof Error ? error.message : String(error)} (${where}; ${target.hint})`;
};

/**
 * Runs one command. `out` gets the command's output; `note` gets which table and endpoint
 * the command uses (stderr by default, so piping `list` keeps only the keys).
 */
export const run = async (
  argv: string[],
  out: (line: string) => void = console.log,
  { env = process.env, note = console.error }: { env?: NodeJS.ProcessEnv; note?: (line: string) => void } = {},
): Promise<void> => {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      tier: { type: 'string' },
      stage: { type: 'string' },
      table: { type: 'string' },
      endpoint: { type: 'string' },
      region: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help === true || command === undefined) {
    out(usage);
    if (command === undefined && values.help !== true) throw new UsageError('a command is required');
    return;
  }
  const target = resolveTarget(values, env);
  note(`keys: table ${target.tableName} (${target.label})`);
  const table = { client: createDocumentClient({ endpoint: target.endpoint, region: target.region }), tableName: target.tableName };
  const apiGateway =
    target.stage === undefined ? undefined : new APIGatewayClient(target.region === undefined ? {} : { region: target.region });
  const sides: KeySides = {
    table,
    stage: target.stage ?? 'local',
    ...(apiGateway === undefined ? {} : { gateway: new UsagePlans(apiGateway, target.stage!, target.tiers) }),
  };
  const tierOf = (value: string | undefined, fallback?: string): string => {
    const tier = value ?? fallback;
    if (tier === undefined) throw new UsageError(`${command} needs --tier <tier> (one of ${target.tiers.join(', ')})`);
    if (!target.tiers.includes(tier))
      throw new UsageError(`--tier must be one of ${target.tiers.join(', ')} (${target.label}); got "${tier}"`);
    return tier;
  };
  try {
    if (!Object.hasOwn(commands, command)) {
      const names = Object.keys(commands);
      throw new UsageError(`unknown command "${command}" (${names.slice(0, -1).join(', ')} or ${names.at(-1)})`);
    }
    await commands[command]!({ target, sides, values, rest, out, tierOf });
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new Error(describeFailure(error, target), { cause: error });
  } finally {
    table.client.destroy();
    apiGateway?.destroy();
  }
};

/** What a command works with: where the keys are, its arguments, and where it writes. */
type CommandInput = {
  readonly target: Target;
  readonly sides: KeySides;
  readonly values: { readonly name?: string | undefined; readonly tier?: string | undefined };
  readonly rest: readonly string[];
  readonly out: (line: string) => void;
  /** The tier named by --tier (or `fallback`), checked against the target's tiers. */
  readonly tierOf: (value: string | undefined, fallback?: string) => string;
};

const noMoreArguments = (rest: readonly string[]) => {
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
};

/** The one key id a command takes, or a usage error saying what it needs. */
const oneKeyId = (rest: readonly string[], needs: string): string => {
  const [keyId, ...extra] = rest;
  if (keyId === undefined) throw new UsageError(needs);
  noMoreArguments(extra);
  return keyId;
};

const commands: Record<string, (input: CommandInput) => Promise<void>> = {
  create: async ({ target, sides, values, rest, out, tierOf }) => {
    const name = values.name?.trim();
    if (!name) throw new UsageError('create needs --name <name> (who or what the key is for)');
    noMoreArguments(rest);
    const tier = tierOf(values.tier, target.defaultTier);
    const { key, item } = await createKey(sides, { name, tier, prefix: target.keyPrefix });
    out(`Created key ${item.keyId} "${item.name}" in tier ${tier}, in ${target.tableName} (${target.label}).`);
    out('The key is shown once; store it now (it cannot be recovered, only revoked):');
    out(key);
  },
  list: async ({ target, sides, out }) => {
    const keys = await listApiKeys(sides.table);
    if (keys.length === 0) out(`No keys in ${target.tableName} (${target.label}).`);
    for (const key of keys)
      out(
        [
          key.keyId,
          key.createdAt,
          key.tier ?? `${target.defaultTier} (default)`,
          key.revokedAt === undefined ? 'active' : `revoked ${key.revokedAt}`,
          key.name,
        ].join('\t'),
      );
  },
  move: async ({ target, sides, values, rest, out, tierOf }) => {
    const keyId = oneKeyId(rest, 'move needs the key id (see `npm run keys -- list`) and --tier <tier>');
    const tier = tierOf(values.tier);
    const moved = await moveKey(sides, keyId, tier);
    // On a stage the usage plan is what limits a key; locally the gateway reads the tier through the authorizer's cache.
    const when =
      target.stage === undefined ? takesEffect(target, 'The new limits apply') : `API Gateway now counts its requests under plan ${tier}.`;
    out(`Moved ${moved.keyId} "${moved.name}" to tier ${tier} (${target.label}). ${when}`);
  },
  adopt: async ({ target, sides, values, rest, out, tierOf }) => {
    noMoreArguments(rest);
    const tier = tierOf(values.tier, target.defaultTier);
    // Keys without a usage identifier are refused by API Gateway (401) until they have one.
    const waiting = (await listApiKeys(sides.table)).filter((key) => key.revokedAt === undefined && key.usageKey === undefined);
    if (waiting.length === 0) out(`Every active key in ${target.tableName} has a usage identifier: nothing to adopt.`);
    for (const key of waiting) {
      await moveKey(sides, key.keyId, tier);
      out(`Adopted ${key.keyId} "${key.name}" into tier ${tier} (${target.label}).`);
    }
  },
  revoke: async ({ target, sides, rest, out }) => {
    const keyId = oneKeyId(rest, 'revoke needs the key id (see `npm run keys -- list`)');
    const { revoked, apiKeyRemoved } = await revokeKey(sides, keyId);
    if (revoked === undefined && apiKeyRemoved === undefined)
      throw new UsageError(`no key with id ${keyId} in ${target.tableName} (${target.label})`);
    if (revoked === undefined) out(`No key ${keyId} in ${target.tableName}; removed its left-over API key ${apiKeyRemoved}.`);
    else out(`Revoked ${revoked.keyId} "${revoked.name}" at ${revoked.revokedAt}. ${takesEffect(target, 'Cached authorizations end')}`);
  },
  canary: async ({ target, sides, rest, out }) => {
    noMoreArguments(rest);
    if (target.stage === undefined)
      throw new UsageError("canary needs --stage <staging|production>: the key is kept in that stage's Secrets Manager");
    const stage = target.stage;
    const secretName = canaryKeySecretName(stage);
    const secrets = new SecretsManagerClient(target.region === undefined ? {} : { region: target.region });
    try {
      const previous = await storedCanaryKey(secrets, secretName);
      const { key, item } = await createKey(sides, { name: `canary (${secretName})`, tier: canaryTier, prefix: target.keyPrefix });
      const value = JSON.stringify({ key, keyId: item.keyId, usageIdentifierKey: item.usageKey });
      try {
        if (previous === undefined)
          await secrets.send(
            new CreateSecretCommand({ Name: secretName, SecretString: value, Description: `Store Orders ${stage}: the canary's API key` }),
          );
        else await secrets.send(new PutSecretValueCommand({ SecretId: secretName, SecretString: value }));
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(
          `canary: key ${item.keyId} was issued but could not be stored in ${secretName} (${reason}); revoke it with \`npm run keys -- revoke ${item.keyId} --stage ${stage}\` and run canary again.`,
          { cause: error },
        );
      }
      out(`Created canary key ${item.keyId} in tier ${canaryTier} and stored it in Secrets Manager as ${secretName} (not printed).`);
      if (previous === undefined) return;
      // The next canary run reads the new key; the old one stops working within the authorizer cache TTL.
      await revokeKey(sides, previous.keyId);
      out(`Revoked the canary key it replaces, ${previous.keyId}. ${takesEffect(target, 'Cached authorizations end')}`);
    } finally {
      secrets.destroy();
    }
  },
};

/** The canary key a stage's secret holds, or undefined before the first `canary`. */
const storedCanaryKey = async (secrets: SecretsManagerClient, secretName: string) => {
  try {
    return await readCanaryKey(secrets, secretName);
  } catch (error) {
    if (error instanceof SecretNotFound) return undefined;
    throw error;
  }
};

/** When a change reaches requests: after the authorizer cache, which holds a key's record (its tier too). */
const takesEffect = (target: Target, what: string): string =>
  target.running === undefined
    ? `${what} within the ${target.stage === undefined ? "target's" : "stage's"} authorizer cache TTL.`
    : `${what} within ${target.running.authorizerCacheTtlSeconds} s (the running npm start's AUTHORIZER_CACHE_TTL_SECONDS).`;

if (import.meta.main) {
  try {
    await run(process.argv.slice(2));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`keys: ${error instanceof UsageError ? message : `failed: ${message}`}`);
    if (error instanceof UsageError) console.error('Run `npm run keys -- --help` for usage.');
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}
