import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as names from '../../infra/names.ts';
import { stages } from '../../infra/stage-config.ts';

// The names a stage's resources carry come from infra/names.ts alone, and reading them costs
// nothing: the operator commands find resources by name without loading the CDK
// (docs/developing.md#small-decisions).
const repoRoot = resolve(import.meta.dirname, '../..');
const text = (file: string) => readFileSync(join(repoRoot, file), 'utf8');
const source = (file: string) => ts.createSourceFile(file, text(file), ts.ScriptTarget.Latest);

/** The modules `file` loads when it is loaded: imports and re-exports that are not `import type` (dynamic imports left out). */
const loadedModules = (file: string): string[] =>
  source(file).statements.flatMap((statement) => {
    const loads =
      (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly) ||
      (ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined && !statement.isTypeOnly);
    const specifier = loads ? (statement as ts.ImportDeclaration).moduleSpecifier : undefined;
    return specifier !== undefined && ts.isStringLiteral(specifier) ? [specifier.text] : [];
  });

/** Every project module `entry` loads, itself included, and the packages they load. */
const loadClosure = (entry: string) => {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const specifier of loadedModules(file))
      if (specifier.startsWith('.')) visit(relative(repoRoot, resolve(repoRoot, dirname(file), specifier)));
      else packages.add(specifier);
  };
  visit(entry);
  return { files: [...files], packages: [...packages] };
};

const codeFiles = (dir: string): string[] =>
  readdirSync(join(repoRoot, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .map((name) => `${dir}/${name}`);

describe('infra/names.ts', () => {
  it('imports nothing', () => {
    expect(ts.preProcessFile(text('infra/names.ts'), true, true).importedFiles).toEqual([]);
  });

  it('is the only code that spells a name of a stage resource', () => {
    const spelled = ['infra', 'shared', 'functions', 'test/lib', 'test/perf']
      .flatMap(codeFiles)
      .filter((file) => file !== 'infra/names.ts')
      .flatMap((file) =>
        text(file)
          .split('\n')
          .map((line, index) => ({ where: `${file}:${index + 1}`, line }))
          .filter(({ line }) => /(store-orders-|StoreOrders-)\$\{/.test(line)),
      );
    expect(spelled.map(({ where }) => where)).toEqual([]);
  });

  it('names a stage as the deployed stages are named', () => {
    expect(names.serviceName('staging')).toBe('store-orders-staging');
    expect(names.preTrafficHookFunctionName('production')).toBe('CodeDeployHook_store-orders-production-pre-traffic');
    expect(names.usagePlanName('production', 'high')).toBe('store-orders-production-high');
    expect(Object.values(stages).map((config) => config.stackName)).toEqual(['StoreOrders-staging', 'StoreOrders-production']);
    expect(names.accountStackName).toBe('StoreOrders-account');
    expect(names.budgetStackName('staging')).toBe('StoreOrders-budget-staging');
    expect(names.budgetName('production', 'eu-west-1')).toBe('store-orders-production-monthly-eu-west-1');
    expect(names.functionConstructId('listOrdersPaged')).toBe('ListOrdersPagedFunction');
  });
});

describe('what the operator commands load', () => {
  it.each(['infra/ops/deploy-preflight.ts', 'infra/ops/keys.ts'])('%s loads no CDK module and not aws-cdk-lib', (entry) => {
    const { files, packages } = loadClosure(entry);
    expect(files).toContain('infra/names.ts');
    expect(files.filter((file) => file.startsWith('infra/cdk/'))).toEqual([]);
    expect(packages.filter((name) => name === 'aws-cdk-lib' || name.startsWith('aws-cdk-lib/'))).toEqual([]);
  });
});
