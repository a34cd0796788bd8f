/**
 * The preflight's table checks (./deploy-preflight.ts): each fixed-name table of the stage's
 * template (orders, API keys) against the live table DynamoDB describes (DescribeTable, its
 * backups and TTL) and the stack CloudFormation holds. A deploy must neither meet a table it does
 * not hold (CloudFormation would fail with "already exists": adopt it first with `cdk import`), nor
 * adopt one whose key schema, streams, billing, indexes, deletion protection, encryption,
 * point-in-time recovery or TTL differ from what it declares (CloudFormation's import checks none of
 * them, and no later deploy applies them), nor drop an index the live table has (a rollback to an
 * older release would), nor leave a table it holds unprotected where its template protects it.
 */
import { DescribeTableCommand, type DynamoDBClient, type TableDescription } from '@aws-sdk/client-dynamodb';
import type { StageConfig } from '../stage-config.ts';
import { type CheckResult, errorName } from './check-results.ts';
import type { CfnResource, CfnTemplate, DeployedResource } from './stage-templates.ts';
import { declaredSettings, liveSettings, type SettingDifference, settingDifferences, type TableSettings } from './table-settings.ts';

/** A table's shape, as the template declares it or as DynamoDB describes it: what adoption and rollback must keep. */
export type TableShape = {
  /** `id (N, HASH)`, in key order. */
  readonly key: string;
  readonly billing: string;
  /** The stream's view type, or `off`. */
  readonly stream: string;
  /** Global secondary indexes by name: their key, and their status where DynamoDB describes it. */
  readonly indexes: ReadonlyMap<string, { readonly key: string; readonly status?: string }>;
  readonly localIndexes: readonly string[];
};

type KeyElement = { AttributeName?: string; KeyType?: string };
type AttributeDefinition = { AttributeName?: string; AttributeType?: string };

const keyText = (schema: readonly KeyElement[] = [], attributes: readonly AttributeDefinition[] = []) =>
  schema
    .map(({ AttributeName, KeyType }) => {
      const type = attributes.find((attribute) => attribute.AttributeName === AttributeName)?.AttributeType ?? '?';
      return `${AttributeName} (${type}, ${KeyType})`;
    })
    .join(', ');

/** What the template declares for a table. */
export const declaredShape = ({ Properties: p = {} }: CfnResource): TableShape => {
  const attributes = (p.AttributeDefinitions ?? []) as AttributeDefinition[];
  const stream = p.StreamSpecification as { StreamViewType?: string } | undefined;
  const indexes = (p.GlobalSecondaryIndexes ?? []) as { IndexName: string; KeySchema: KeyElement[] }[];
  return {
    key: keyText(p.KeySchema as KeyElement[], attributes),
    billing: String(p.BillingMode ?? 'PROVISIONED'),
    stream: stream?.StreamViewType ?? 'off',
    indexes: new Map(indexes.map((index) => [index.IndexName, { key: keyText(index.KeySchema, attributes) }])),
    localIndexes: ((p.LocalSecondaryIndexes ?? []) as { IndexName: string }[]).map(({ IndexName }) => IndexName),
  };
};

/** What DynamoDB describes for a live table. */
export const liveShape = (table: TableDescription): TableShape => ({
  key: keyText(table.KeySchema, table.AttributeDefinitions),
  billing: table.BillingModeSummary?.BillingMode ?? 'PROVISIONED',
  stream: table.StreamSpecification?.StreamEnabled ? (table.StreamSpecification.StreamViewType ?? 'on') : 'off',
  indexes: new Map(
    (table.GlobalSecondaryIndexes ?? []).map((index) => [
      index.IndexName ?? '',
      {
        key: keyText(index.KeySchema, table.AttributeDefinitions),
        status: `${index.IndexStatus}${index.Backfilling ? ', backfilling' : ''}`,
      },
    ]),
  ),
  localIndexes: (table.LocalSecondaryIndexes ?? []).map(({ IndexName }) => IndexName ?? ''),
});

/** Where a live table is not what the template declares, for adopting it: each difference in words. */
export const adoptionDifferences = (declared: TableShape, live: TableShape): string[] => {
  const differ = (what: string, want: string, have: string) =>
    want === have ? [] : [`${what}: the stack declares ${want}, the table has ${have}`];
  const names = (indexes: ReadonlyMap<string, unknown>) => [...indexes.keys()].sort().join(', ') || 'none';
  return [
    ...differ('key', declared.key, live.key),
    ...differ('billing', declared.billing, live.billing),
    ...differ('stream', declared.stream, live.stream),
    ...differ('global secondary indexes', names(declared.indexes), names(live.indexes)),
    ...[...declared.indexes].flatMap(([name, { key }]) => {
      const liveKey = live.indexes.get(name)?.key;
      return liveKey === undefined ? [] : differ(`index ${name}'s key`, key, liveKey);
    }),
    ...differ('local secondary indexes', declared.localIndexes.join(', ') || 'none', live.localIndexes.join(', ') || 'none'),
  ];
};

/** The live table's indexes a deploy of the template would delete (CloudFormation drops an index the template no longer has). */
export const removedIndexes = (declared: TableShape, live: TableShape): string[] =>
  [...live.indexes].filter(([name]) => !declared.indexes.has(name)).map(([name, { status }]) => `${name} (${status})`);

/** The template's tables with a fixed name: the ones that can exist outside the stack, and that hold data. */
export const fixedNameTables = (template: CfnTemplate): { logicalId: string; tableName: string; resource: CfnResource }[] =>
  Object.entries(template.Resources ?? {})
    .filter(([, resource]) => resource.Type === 'AWS::DynamoDB::Table' && typeof resource.Properties?.TableName === 'string')
    .map(([logicalId, resource]) => ({ logicalId, tableName: resource.Properties!.TableName as string, resource }));

const describeTable = async (dynamoDb: DynamoDBClient, name: string): Promise<TableDescription | undefined> => {
  try {
    return (await dynamoDb.send(new DescribeTableCommand({ TableName: name }))).Table;
  } catch (error) {
    if (errorName(error) === 'ResourceNotFoundException') return undefined;
    throw error;
  }
};

const adoptFix = (config: Stage, tableName: string) =>
  `adopt it into ${config.stackName} before any deploy (docs/reference/stages.md#an-account-whose-tables-already-exist): npm run import-mapping -- --stage ${config.stage} --table ${tableName} --out import-${config.stage}.json && npx cdk import ${config.stackName} --resource-mapping import-${config.stage}.json; then deploy without -c firstDeploy`;

type Stage = Pick<StageConfig, 'stage' | 'stackName' | 'data'>;

const commands = (differences: readonly SettingDifference[]) => differences.map(({ command }) => command).join(' && ');

/**
 * One table outside the stack: adoptable when it is what the stack declares, else not as it is.
 * Its settings are compared too: `cdk import` adopts the table as it is, and the deploys after it
 * send the properties the import recorded, so CloudFormation never applies them.
 */
const outsideTheStack = (
  config: Stage,
  tableName: string,
  [declared, live]: [TableShape, TableShape],
  [wanted, settings]: [TableSettings, SettingDifference[]],
) => {
  const differences = [...adoptionDifferences(declared, live), ...settings.map(({ text }) => text)];
  if (differences.length > settings.length)
    return {
      ok: false,
      message: `${tableName} exists outside ${config.stackName} and is not what the stack declares (${differences.join('; ')}): a deploy would fail with "already exists", and adopting it as it is would leave CloudFormation managing a table it misdescribes`,
      fix: 'make the table and infra/cdk/tables.ts agree first (the key cannot change; a stream, the billing mode and indexes can, on either side), then adopt it (docs/reference/stages.md#an-account-whose-tables-already-exist)',
    };
  if (settings.length > 0)
    return {
      ok: false,
      message: `${tableName} exists outside ${config.stackName} and is not adoptable as it is (${differences.join('; ')}): cdk import adopts a table as it is, and no later deploy changes these settings (the stack's template already declares them)`,
      fix: `bring the table to what the stack declares first: ${commands(settings)}; wait until aws dynamodb describe-table --table-name ${tableName} shows it ACTIVE, run the preflight again, then adopt it (docs/reference/stages.md#an-account-whose-tables-already-exist)`,
    };
  return {
    ok: false,
    message: `${tableName} exists outside ${config.stackName} (the store's own table, or one a failed deploy left) and matches what the stack declares (${declared.key}, ${declared.billing}, stream ${declared.stream}, deletion protection ${wanted.deletionProtection}, encryption with ${wanted.encryption}, point-in-time recovery ${wanted.pointInTimeRecovery}, time to live ${wanted.timeToLive}): a deploy would fail with "already exists"`,
    fix: adoptFix(config, tableName),
  };
};

/**
 * A table this deploy creates. In the stack's create it must be unprotected: DynamoDB refuses to
 * delete a protected table, so a create that failed could not roll it back, and every retry would
 * meet its name (`-c firstDeploy=true` makes it so; the next deploy protects it).
 */
const createdHere = (config: Stage, tableName: string, resource: CfnResource, stackCreate: boolean) => {
  const check = `table ${tableName}`;
  if (!stackCreate) return { check, ok: true, message: `${tableName} does not exist yet: this deploy creates it` };
  if (resource.Properties?.DeletionProtectionEnabled === true)
    return {
      check,
      ok: false,
      message: `${tableName} does not exist yet, and this template creates it with deletion protection on in the stack's create: should the create fail, its rollback could not delete the table, and every retry would meet its name`,
      fix: `create the stack with npx cdk deploy ${config.stackName} -c firstDeploy=true (check that build: npm run preflight -- --stage ${config.stage} --first-deploy); the next deploy protects the tables`,
    };
  return {
    check,
    ok: true,
    message: `${tableName} does not exist yet: the stack's create makes it, unprotected until the next deploy where the stage protects its tables`,
  };
};

/**
 * Deletion protection and point-in-time recovery of a table the stack holds. Where the live table
 * differs from the template, the deploy fixes it only if it changes the property from what the
 * stack recorded (a first deploy's unprotected tables, protected by the next deploy); otherwise
 * CloudFormation sends nothing (someone changed the table by hand, or `cdk import` adopted it
 * as it was). A template that turns protection off where the stage protects its tables is a
 * `-c firstDeploy=true` build of a stack that exists.
 */
const heldSettings = (
  config: Stage,
  tableName: string,
  [declared, live]: [TableSettings, TableSettings],
  recorded: TableSettings | undefined,
): { ok: boolean; message: string; fix?: string } | string => {
  if (config.data.deletionProtection && declared.deletionProtection === 'off')
    return {
      ok: false,
      message: `this template turns deletion protection of ${tableName} off, while ${config.stage} protects its tables: a -c firstDeploy=true build, which only a stack's create may use`,
      fix: `deploy without -c firstDeploy (npm run preflight -- --stage ${config.stage})`,
    };
  const differences = settingDifferences(tableName, declared, live, ['deletionProtection', 'pointInTimeRecovery']);
  const applied = differences.filter(({ setting }) => recorded !== undefined && recorded[setting] !== declared[setting]);
  const drifted = differences.filter((difference) => !applied.includes(difference));
  if (drifted.length > 0)
    return {
      ok: false,
      message: `${tableName} is not what ${config.stackName} declares (${drifted.map(({ text }) => text).join('; ')}), and this deploy would not change it: CloudFormation applies a property only when the template changes it (the table was changed by hand, or adopted as it was)`,
      fix: `${commands(drifted)}; then run the preflight again`,
    };
  return applied
    .map(
      ({ setting }) =>
        `; this deploy turns its ${setting === 'deletionProtection' ? 'deletion protection' : 'point-in-time recovery'} ${declared[setting]}`,
    )
    .join('');
};

/** One table the stack holds: a deploy must not drop its indexes nor change its key, and must keep it protected. */
const inTheStack = (
  config: Stage,
  tableName: string,
  [declared, live]: [TableShape, TableShape],
  settings: { declared: TableSettings; live: TableSettings; recorded: TableSettings | undefined },
) => {
  const removed = removedIndexes(declared, live);
  if (removed.length > 0)
    return {
      ok: false,
      message: `this template removes ${removed.join(', ')} from ${tableName}: CloudFormation would delete the index (filtered v2 pages answer 503 until it is rebuilt, hours on a large table), or fail while it is being built. An older release's template, or one with ordersStatusIndex off, does this`,
      fix: 'deploy a template that keeps the index: revert the change on main instead of deploying an older release (docs/deploying.md#stop-or-roll-back-a-deploy); to remove the index on purpose, delete it by hand first (docs/reference/stages.md#the-status-index)',
    };
  if (declared.key !== live.key)
    return {
      ok: false,
      message: `this template gives ${tableName} the key ${declared.key}, the table has ${live.key}: CloudFormation would replace the table, which a fixed name does not allow`,
      fix: 'the key schema is a contract with the store’s other systems: deploy a template that keeps it',
    };
  const protection = heldSettings(config, tableName, [settings.declared, settings.live], settings.recorded);
  if (typeof protection !== 'string') return protection;
  const added = [...declared.indexes.keys()].filter((name) => !live.indexes.has(name));
  const adds =
    added.length === 0
      ? ''
      : `; this deploy adds ${added.join(', ')} (a backfill: deploy it alone and watch it, docs/reference/stages.md#the-status-index)`;
  return { ok: true, message: `${tableName} is the stack's, keeps its key and its ${live.indexes.size} index(es)${adds}${protection}` };
};

/**
 * One result per fixed-name table of the template: created by this deploy, the stack's own and
 * kept as it is, or outside the stack (adopt it first). `deployed` is the stack as CloudFormation
 * holds it (undefined before its first deploy), `recorded` the template it last deployed.
 */
export const checkTables = async (
  dynamoDb: DynamoDBClient,
  config: Stage,
  template: CfnTemplate,
  deployed: ReadonlyMap<string, DeployedResource> | undefined,
  recorded?: CfnTemplate,
): Promise<CheckResult[]> =>
  Promise.all(
    fixedNameTables(template).map(async ({ logicalId, tableName, resource }): Promise<CheckResult> => {
      const check = `table ${tableName}`;
      const table = await describeTable(dynamoDb, tableName);
      const held = deployed?.get(logicalId)?.physicalId === tableName;
      if (table === undefined) {
        if (held)
          return {
            check,
            ok: false,
            message: `${config.stackName} holds ${tableName}, but DynamoDB has no such table: it was deleted outside CloudFormation, and a deploy would not bring it back`,
            fix: 'restore it from its point-in-time recovery or a backup under the same name (docs/runbook.md#recover-orders-data) before any deploy',
          };
        return createdHere(config, tableName, resource, deployed === undefined || deployed.size === 0);
      }
      const shapes: [TableShape, TableShape] = [declaredShape(resource), liveShape(table)];
      const declared = declaredSettings(resource);
      const live = await liveSettings(dynamoDb, table);
      if (held) {
        const recordedResource = recorded?.Resources?.[logicalId];
        const wasRecorded = recordedResource === undefined ? undefined : declaredSettings(recordedResource);
        return { check, ...inTheStack(config, tableName, shapes, { declared, live, recorded: wasRecorded }) };
      }
      return { check, ...outsideTheStack(config, tableName, shapes, [declared, settingDifferences(tableName, declared, live)]) };
    }),
  );
