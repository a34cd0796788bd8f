import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openApiFiles } from '../../infra/openapi/cli.ts';
import { buildOpenApiDocument, openApiJson } from '../../infra/openapi/document.ts';
import { withDeprecated } from '../fixtures/deprecated-operation/contract.ts';
import { runJsonCli } from '../lib/json-cli.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const redoclyCli = resolve(repoRoot, 'node_modules/@redocly/cli/bin/cli.js');

type LintReport = { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string }[] };

/** `redocly lint` with the repository's redocly.yaml (found in the working directory), offline and quiet. */
const lint = (file: string) =>
  runJsonCli<LintReport>('redocly', [redoclyCli, 'lint', file, '--format=json'], {
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });

const describeProblems = (report: LintReport) => report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`).join('\n');

describe('OpenAPI lint (Redocly, recommended-strict)', () => {
  const tempDirs: string[] = [];
  afterAll(() => Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  it(`passes ${openApiFiles.document} with no errors and no warnings`, async () => {
    const { exitCode, report } = await lint(openApiFiles.document);
    expect(report.totals, describeProblems(report)).toEqual(expect.objectContaining({ errors: 0, warnings: 0 }));
    expect(exitCode).toBe(0);
  });

  it('passes a document with a deprecated operation too', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
    tempDirs.push(dir);
    const file = join(dir, 'openapi.json');
    await writeFile(file, openApiJson(buildOpenApiDocument(withDeprecated.operations)));
    const { exitCode, report } = await lint(file);
    expect(report.totals, describeProblems(report)).toEqual(expect.objectContaining({ errors: 0, warnings: 0 }));
    expect(exitCode).toBe(0);
  });

  it('fails a document that breaks a rule, so a passing run means something', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
    tempDirs.push(dir);
    const broken = buildOpenApiDocument();
    delete broken.paths?.['/v1/store/orders']?.get?.summary;
    const file = join(dir, 'openapi.json');
    await writeFile(file, openApiJson(broken));
    const { exitCode, report } = await lint(file);
    expect(exitCode).not.toBe(0);
    expect(report.problems.map((problem) => problem.ruleId)).toContain('operation-summary');
  });
});
