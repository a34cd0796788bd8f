/**
 * `npm run import-mapping`: the resource mapping `cdk import --resource-mapping <file>` reads to
 * adopt tables that already exist. The CDK CLI reads the file as `{"<logical id>": {<identifier
 * property>: <value>}}` for resources the deployed stack does not hold yet, and asks CloudFormation
 * for the identifier properties of each type (aws-cdk's ResourceImporter); CloudFormation requires
 * a DeletionPolicy on every resource it imports ("Bringing existing resources into CloudFormation
 * management"). `cdk import` itself needs AWS; the mapping's shape, the identifier and the
 * template's deletion policies are checked here, the identifier against AWS::DynamoDB::Table's
 * resource schema as cfn-lint ships it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adoptableDeletionPolicies, importMapping, tableImportIdentifier } from '../../infra/ops/import-mapping.ts';
import type { CfnTemplate } from '../../infra/ops/stage-templates.ts';
import { stages } from '../../infra/stage-config.ts';
import { repoRoot, stageNames, sharedApp, tempDir } from '../lib/cdk.ts';

const { app, outdir } = sharedApp();
const assembly = app.synth();
const templateOf = (stage: (typeof stageNames)[number]) => assembly.getStackByName(stages[stage].stackName).template as CfnTemplate;

/** The primary identifier of a resource type in the CloudFormation registry schema cfn-lint ships, or undefined without cfn-lint. */
const schemaIdentifier = (type: string): string[] | undefined => {
  const read = spawnSync(
    'python3',
    [
      '-c',
      'import json,sys\nfrom cfnlint.schema import PROVIDER_SCHEMA_MANAGER as m\nprint(json.dumps(m.get_resource_schema("us-east-1", sys.argv[1]).schema["primaryIdentifier"]))',
      type,
    ],
    { encoding: 'utf8' },
  );
  return read.status === 0 ? JSON.parse(read.stdout) : undefined;
};

describe.each(stageNames)('the %s import mapping', (stage) => {
  const config = stages[stage];
  const template = templateOf(stage);
  const tableIds = Object.fromEntries(
    Object.entries(template.Resources ?? {})
      .filter(([, resource]) => resource.Type === 'AWS::DynamoDB::Table' && typeof resource.Properties?.TableName === 'string')
      .map(([id, resource]) => [resource.Properties!.TableName as string, id]),
  );

  it('maps each fixed-name table by the logical id the stack gives it to its table name', () => {
    expect(importMapping(template)).toEqual({
      [tableIds[config.ordersTableName]!]: { TableName: config.ordersTableName },
      [tableIds[config.apiKeysTableName]!]: { TableName: config.apiKeysTableName },
    });
    expect(importMapping(template, [config.ordersTableName])).toEqual({
      [tableIds[config.ordersTableName]!]: { TableName: config.ordersTableName },
    });
    expect(() => importMapping(template, ['store-orders-other-orders'])).toThrow(/no table named store-orders-other-orders/);
  });

  it('names only resources CloudFormation can import into this stack: each with a deletion policy that keeps it', () => {
    for (const logicalId of Object.keys(importMapping(template))) {
      const resource = template.Resources![logicalId]!;
      expect(resource.Type).toBe('AWS::DynamoDB::Table');
      expect(adoptableDeletionPolicies).toContain(resource.DeletionPolicy);
      expect(resource.DeletionPolicy).toBe('RetainExceptOnCreate');
    }
  });
});

describe('npm run import-mapping', () => {
  it('writes the mapping of the tables asked for to --out, as cdk import --resource-mapping reads it (npm run adds nothing to the file)', () => {
    const file = join(tempDir('store-orders-import-mapping-'), 'import-production.json');
    execFileSync(
      'npm',
      [
        'run',
        'import-mapping',
        '--',
        '--stage',
        'production',
        '--table',
        stages.production.ordersTableName,
        '--app',
        outdir,
        '--out',
        file,
      ],
      {
        cwd: repoRoot,
        encoding: 'utf8',
      },
    );
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(importMapping(templateOf('production'), [stages.production.ordersTableName]));
  });

  const identifier = schemaIdentifier('AWS::DynamoDB::Table');
  it.runIf(identifier !== undefined)(
    'uses the identifier CloudFormation imports a table by (the resource schema’s primary identifier)',
    () => {
      expect(identifier).toEqual([`/properties/${tableImportIdentifier}`]);
    },
  );
});
