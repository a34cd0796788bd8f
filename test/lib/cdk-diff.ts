/**
 * The real CDK CLI's `cdk diff` between two templates of one stack, offline: `--template` names
 * the template deployed now, and a cloud assembly made from the real one (manifest.json, one stack
 * whose template file is the other) the template a deploy would send. The CLI's diff engine knows
 * which property changes replace a resource ("requires replacement"), from CloudFormation's
 * resource specification; no credentials or network are needed (`--no-change-set`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './cdk.ts';

type Template = { Resources?: Record<string, unknown> };
type Manifest = { version: string; artifacts: Record<string, { properties: Record<string, unknown> } & Record<string, unknown>> };

/** What a deploy of `next` over `deployed` does to the DynamoDB tables, as `cdk diff` reports it. */
export type TableChanges = { removed: string[]; replaced: string[]; indexesRemoved: string[]; output: string };

/** Runs `cdk diff` for `stackName`: `deployed` as the stack's template now, `next` as the one deployed over it. */
export const cdkDiff = (assemblyDir: string, stackName: string, deployed: Template, next: Template): string => {
  const dir = mkdtempSync(join(tmpdir(), 'store-orders-cdk-diff-'));
  try {
    const manifest = JSON.parse(readFileSync(join(assemblyDir, 'manifest.json'), 'utf8')) as Manifest;
    const { dependencies: _dependencies, additionalMetadataFile: _metadata, ...artifact } = manifest.artifacts[stackName]!;
    // The stack alone, deployed by no role: `cdk diff --template` reads no account.
    const properties = { tags: artifact.properties.tags, templateFile: 'next.template.json' };
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify({ version: manifest.version, artifacts: { [stackName]: { ...artifact, properties } } }),
    );
    writeFileSync(join(dir, 'next.template.json'), JSON.stringify(next));
    writeFileSync(join(dir, 'deployed.template.json'), JSON.stringify(deployed));
    // The CLI writes its report to stderr.
    const run = spawnSync(
      process.execPath,
      [
        join(repoRoot, 'node_modules/aws-cdk/bin/cdk'),
        'diff',
        '--app',
        dir,
        stackName,
        '--exclusively',
        '--template',
        join(dir, 'deployed.template.json'),
        '--no-change-set',
        '--no-notices',
        '--no-version-reporting',
      ],
      { cwd: dir, encoding: 'utf8', env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true', FORCE_COLOR: '0', NO_COLOR: '1' } },
    );
    if (run.status !== 0) throw new Error(`cdk diff failed (${run.status}): ${run.stderr}`);
    const output = `${run.stdout}${run.stderr}`;
    // A report that names no stack is no report: fail rather than find nothing in it.
    if (!output.includes(`Stack ${stackName}`)) throw new Error(`cdk diff said nothing of ${stackName}: ${output}`);
    return output;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** The DynamoDB table lines of a `cdk diff` report: tables removed, replaced, and tables whose index list loses an entry. */
export const tableChanges = (output: string): TableChanges => {
  const blocks = output.split(/\n(?=\[[-+~]\] )/);
  const tableBlocks = blocks.filter((block) => /^\[[-+~]\] AWS::DynamoDB::Table /.test(block));
  // `[~] AWS::DynamoDB::Table [<construct path>] <logical id> [replace|destroy|orphan|may be replaced]`
  const impact = new Set(['replace', 'destroy', 'orphan', 'retain', 'may', 'be', 'replaced']);
  const name = (block: string) =>
    block
      .split('\n')[0]!
      .split(' ')
      .slice(2)
      .filter((token) => !impact.has(token))
      .at(-1) ?? block;
  return {
    removed: tableBlocks.filter((block) => block.startsWith('[-] ')).map(name),
    replaced: tableBlocks.filter((block) => /\b(replace|may be replaced)\b/.test(block.split('\n')[0]!)).map(name),
    indexesRemoved: tableBlocks.filter((block) => /\[-\] GlobalSecondaryIndexes|\[-\].*"IndexName"/.test(block)).map(name),
    output,
  };
};
