/**
 * `npm run keys -- <create|list|revoke> …`: issues, lists and revokes API keys. Only the
 * SHA-256 hash of a key is stored; a new key is printed once, here, and never again.
 *
 * Target: the local run's table by default (DYNAMODB_ENDPOINT or DynamoDB Local on
 * 127.0.0.1:8000, table API_KEYS_TABLE or `api-keys`); `--stage staging|production` for a
 * deployed stage's table (AWS credentials from the usual SDK chain); `--table` and
 * `--endpoint` override either.
 */
import { parseArgs } from 'node:util';
import { createApiKey, listApiKeys, revokeApiKey } from '../shared/api-keys.ts';
import { tableName } from '../shared/config.ts';
import { createDocumentClient } from '../shared/dynamo.ts';
import { localStage, type StageName, stages } from './stage-config.ts';

const usage = `Usage: npm run keys -- <command> [options]

Commands:
  create --name <name>   issue a new key (printed once; only its hash is stored)
  list                   show every key: id, name, created, revoked
  revoke <keyId>         revoke a key (takes effect within the authorizer cache TTL)

Options:
  --stage <staging|production>  a deployed stage's keys table (needs AWS credentials)
  --table <name>                the keys table (overrides the stage's or local default)
  --endpoint <url>              a DynamoDB endpoint (default for local: DYNAMODB_ENDPOINT or http://127.0.0.1:${localStage.dynamoDbPort})
  --region <region>             AWS region (default: the SDK's, e.g. AWS_REGION)`;

class UsageError extends Error {}

type Target = { tableName: string; endpoint: string | undefined; region: string | undefined; keyPrefix: string; label: string };

const resolveTarget = (values: {
  stage?: string | undefined;
  table?: string | undefined;
  endpoint?: string | undefined;
  region?: string | undefined;
}): Target => {
  const { stage } = values;
  if (stage !== undefined && !(stage in stages))
    throw new UsageError(`--stage must be one of ${Object.keys(stages).join(', ')}; got "${stage}"`);
  const deployed = stage === undefined ? undefined : stages[stage as StageName];
  const table = values.table ?? deployed?.apiKeysTableName ?? process.env.API_KEYS_TABLE ?? localStage.apiKeysTableName;
  const parsedTable = tableName.safeParse(table);
  if (!parsedTable.success) throw new UsageError(`table name "${table}" ${parsedTable.error.issues[0]?.message}`);
  const endpoint =
    values.endpoint ??
    (deployed === undefined ? (process.env.DYNAMODB_ENDPOINT ?? `http://127.0.0.1:${localStage.dynamoDbPort}`) : undefined);
  if (endpoint !== undefined && !URL.canParse(endpoint))
    throw new UsageError(`--endpoint must be a URL such as http://127.0.0.1:8000; got "${endpoint}"`);
  return {
    tableName: table,
    endpoint,
    region: values.region,
    keyPrefix: deployed?.keyPrefix ?? localStage.keyPrefix,
    label: deployed === undefined ? `local (${endpoint})` : `${deployed.stage}`,
  };
};

export const run = async (argv: string[], out: (line: string) => void = console.log): Promise<void> => {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
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
  const target = resolveTarget(values);
  const table = { client: createDocumentClient({ endpoint: target.endpoint, region: target.region }), tableName: target.tableName };
  try {
    switch (command) {
      case 'create': {
        const name = values.name?.trim();
        if (!name) throw new UsageError('create needs --name <name> (who or what the key is for)');
        if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
        const { key, item } = await createApiKey(table, { name, prefix: target.keyPrefix });
        out(`Created key ${item.keyId} "${item.name}" in ${target.tableName} (${target.label}).`);
        out('The key is shown once; store it now (it cannot be recovered, only revoked):');
        out(key);
        return;
      }
      case 'list': {
        const keys = await listApiKeys(table);
        if (keys.length === 0) out(`No keys in ${target.tableName} (${target.label}).`);
        for (const key of keys)
          out([key.keyId, key.createdAt, key.revokedAt === undefined ? 'active' : `revoked ${key.revokedAt}`, key.name].join('\t'));
        return;
      }
      case 'revoke': {
        const [keyId, ...extra] = rest;
        if (keyId === undefined) throw new UsageError('revoke needs the key id (see `npm run keys -- list`)');
        if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
        const revoked = await revokeApiKey(table, keyId);
        if (revoked === undefined) throw new UsageError(`no key with id ${keyId} in ${target.tableName} (${target.label})`);
        out(
          `Revoked ${revoked.keyId} "${revoked.name}" at ${revoked.revokedAt}. Cached authorizations end within the stage's authorizer cache TTL.`,
        );
        return;
      }
      default:
        throw new UsageError(`unknown command "${command}" (create, list or revoke)`);
    }
  } finally {
    table.client.destroy();
  }
};

if (import.meta.main) {
  try {
    await run(process.argv.slice(2));
  } catch (error) {
    const unreachable = (error as { code?: string }).code === 'ECONNREFUSED';
    const message = unreachable
      ? `cannot reach DynamoDB (${(error as Error).message}). For the local run, start \`npm start\` first or set DYNAMODB_ENDPOINT.`
      : error instanceof Error
        ? error.message
        : String(error);
    console.error(`keys: ${error instanceof UsageError ? message : `failed: ${message}`}`);
    if (error instanceof UsageError) console.error('Run `npm run keys -- --help` for usage.');
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}
