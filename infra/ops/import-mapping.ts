/**
 * `npm run import-mapping -- --stage <name> --out <file> [--table <table name>]... [--app <cloud assembly dir>]`:
 * the resource mapping `cdk import --resource-mapping <file>` reads, to adopt tables that already
 * exist into the stage's stack (docs/reference/stages.md#an-account-whose-tables-already-exist). Written
 * to `--out` (npm's own lines would spoil a redirected stdout), else printed, as
 * `{"<logical id>": {"TableName": "<name>"}}`, one entry per table asked for (by
 * default every fixed-name table of the stage): the logical ids the stack gives its tables, and the
 * identifier CloudFormation imports a table by. Run `npm run preflight` first: it says which tables
 * exist outside the stack and whether each is what the stack declares; a mapping names only those.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type StageName, stages } from '../stage-config.ts';
import { type CfnTemplate, deployTemplates } from './stage-templates.ts';
import { fixedNameTables } from './table-checks.ts';

/**
 * The property CloudFormation identifies an imported table by: the primary identifier of
 * AWS::DynamoDB::Table's resource schema (`/properties/TableName`; test/infra/import-mapping.test.ts
 * reads it from the schema cfn-lint ships), which is what `cdk import` asks for.
 */
export const tableImportIdentifier = 'TableName';

/** The deletion policies a table may be adopted with: CloudFormation requires one on every imported resource, and none may delete data. */
export const adoptableDeletionPolicies: readonly string[] = ['Retain', 'RetainExceptOnCreate'];

export type ResourceMapping = Record<string, Record<typeof tableImportIdentifier, string>>;

/** The mapping of the template's fixed-name tables, or of those named; an unknown name, or a table that could be deleted, is an error. */
export const importMapping = (template: CfnTemplate, tableNames?: readonly string[]): ResourceMapping => {
  const tables = fixedNameTables(template);
  const unknown = (tableNames ?? []).filter((name) => !tables.some((table) => table.tableName === name));
  if (unknown.length > 0)
    throw new Error(`no table named ${unknown.join(', ')} in the stack; its tables: ${tables.map((table) => table.tableName).join(', ')}`);
  const chosen = tableNames === undefined ? tables : tables.filter((table) => tableNames.includes(table.tableName));
  for (const { tableName, resource } of chosen)
    if (!adoptableDeletionPolicies.includes(resource.DeletionPolicy ?? ''))
      throw new Error(
        `${tableName} has DeletionPolicy ${resource.DeletionPolicy ?? '(none)'}: adopt a table only into a stack that keeps it`,
      );
  return Object.fromEntries(chosen.map(({ logicalId, tableName }) => [logicalId, { [tableImportIdentifier]: tableName }]));
};

const usage = `Usage: npm run import-mapping -- --stage <${Object.keys(stages).join('|')}> --out <file> [--table <table name>]... [--app <cloud assembly dir>]

Writes to --out (else prints) the resource mapping for npx cdk import <stack> --resource-mapping
<file>: the stage's tables (or those named with --table) by the logical id the stack gives them.
The templates are those of --app, else this checkout's.`;

const main = async () => {
  const { values } = parseArgs({
    options: {
      stage: { type: 'string' },
      table: { type: 'string', multiple: true },
      out: { type: 'string' },
      app: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return void console.log(usage);
  const config = stages[values.stage as StageName];
  if (config === undefined) {
    console.error(usage);
    process.exitCode = 2;
    return;
  }
  const template = (await deployTemplates(values.app)).get(config.stackName) ?? {};
  try {
    const mapping = `${JSON.stringify(importMapping(template, values.table), null, 2)}\n`;
    if (values.out === undefined) process.stdout.write(mapping);
    else writeFileSync(values.out, mapping);
  } catch (error) {
    console.error((error as Error).message);
    process.exitCode = 1;
  }
};

if (import.meta.main) await main();
