import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiFiles } from '../../infra/openapi/cli.ts';
import { buildOpenApiDocument, openApiJson } from '../../infra/openapi/document.ts';
import { withDeprecated } from '../fixtures/deprecated-operation/contract.ts';
import { runJsonCli } from '../lib/json-cli.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
// The CLI rather than spectral-core from code: spectral-core's own loader (ruleset-bundler's
// with-loader) cannot bundle the CommonJS OWASP ruleset without plugins only the CLI sets up,
// and the CLI is what a developer runs (docs/api.md#api-contract-openapi-and-clients).
const spectralCli = resolve(repoRoot, 'node_modules/@stoplight/spectral-cli/dist/index.js');

type Finding = { code: string; severity: number; path: string[]; message: string };

/**
 * `spectral lint` with the repository's .spectral.yaml, every severity failing (hint and info
 * too). A document given as text is read from stdin as if it were docs/openapi.json, so the
 * ruleset's overrides (which name places in that file) apply to it as they would to the file.
 */
const lint = async (document: { file: string } | { text: string }) => {
  const target = 'file' in document ? [document.file] : ['--stdin-filepath', openApiFiles.document];
  const { exitCode, report } = await runJsonCli<Finding[]>(
    'spectral',
    [spectralCli, 'lint', ...target, '--ruleset', '.spectral.yaml', '--format', 'json', '--fail-severity', 'hint', '--quiet'],
    { input: 'text' in document ? document.text : '' },
  );
  return { exitCode, findings: report };
};

const located = (findings: Finding[]) => findings.map((finding) => `${finding.code} at ${finding.path.join('.')}`);

describe.concurrent('OpenAPI lint (Spectral, OWASP API Security ruleset)', () => {
  it(`finds nothing in ${openApiFiles.document} that .spectral.yaml does not waive`, async () => {
    const { exitCode, findings } = await lint({ file: openApiFiles.document });
    expect(located(findings)).toEqual([]);
    expect(exitCode).toBe(0);
  });

  // One run for every check that needs a document other than the file: each run costs a second
  // or more (the CLI bundles the ruleset each time).
  it('reports whatever the waivers do not cover, also next to a place where that rule is waived', async () => {
    const document = buildOpenApiDocument(withDeprecated.operations);
    const error = document.components?.schemas?.ErrorRecord as { properties: { message: Record<string, unknown> } };
    delete error.properties.message.maxLength;
    // The waiver names the third server (npm start's); a fourth on http:// is a finding.
    document.servers?.push({ url: 'http://orders.example.com/v1', description: 'Production mirror', 'x-internal': false });
    const { exitCode, findings } = await lint({ text: openApiJson(document) });
    expect(exitCode).not.toBe(0);
    // The deprecated operation's Deprecation, Sunset and Link headers pass; its list is unpaginated
    // like the live one, whose waiver names /v1/store/orders alone.
    expect(located(findings).sort()).toEqual([
      'owasp:api4:2023-array-limit at paths./v1/store/legacy-orders.get.responses.200.content.application/json.schema',
      'owasp:api4:2023-string-limit at components.schemas.ErrorRecord.properties.message',
      'owasp:api8:2023-no-server-http at servers.3.url',
    ]);
  });
});
