/**
 * `npm run docs`: the browsable API reference, one self-contained HTML page built from
 * docs/openapi.json with Redoc 2's standalone bundle inlined. It loads nothing at view time
 * (no CDN, no fetch of the document), so it opens offline and from file://. Redoc 2, not the
 * Redoc 3 of `redocly build-docs`: Redoc 3's page shows only an overview and links each
 * operation to a sub-page that does not exist in a single file.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { z } from 'zod';

const repoRoot = resolve(import.meta.dirname, '../..');

export const apiReferenceFiles = { document: 'docs/openapi.json', page: 'docs/api-reference.html' } as const;

const documentSchema = z.looseObject({ info: z.looseObject({ title: z.string(), version: z.string() }) });

/** Redoc's options: everything expanded that a reader would otherwise click open. */
const redocOptions = { expandResponses: '200,204', jsonSampleExpandLevel: 3, hideDownloadButton: true, nativeScrollbars: true };

/** JSON that is safe inside a <script> element: `<` escaped, so no `</script>` can close it early. */
const scriptSafeJson = (value: unknown) => JSON.stringify(value).replaceAll('<', '\\u003c');

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** The page for an OpenAPI document (its JSON text), with the Redoc bundle inlined. */
export const buildApiReference = (documentJson: string): string => {
  const document = documentSchema.parse(JSON.parse(documentJson));
  const redoc = readFileSync(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
  // The bundle is inlined as it is; it must not hold the text that would end its <script> element.
  if (/<\/script/i.test(redoc)) throw new Error('the Redoc bundle contains "</script": it cannot be inlined as it is');
  const title = `${document.info.title} ${document.info.version}: API reference`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<div id="redoc"></div>
<script id="openapi-document" type="application/json">${scriptSafeJson(document)}</script>
<script>${redoc}</script>
<script>
Redoc.init(JSON.parse(document.getElementById('openapi-document').textContent), ${JSON.stringify(redocOptions)}, document.getElementById('redoc'));
</script>
</body>
</html>
`;
};

/** Builds the page from the committed document; returns the path written. */
export const writeApiReference = async (out: string = resolve(repoRoot, apiReferenceFiles.page)): Promise<string> => {
  const page = buildApiReference(readFileSync(resolve(repoRoot, apiReferenceFiles.document), 'utf8'));
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, page);
  return out;
};

if (import.meta.main) {
  const out = await writeApiReference(
    process.argv[2] === undefined ? undefined : resolve(process.env.INIT_CWD || process.cwd(), process.argv[2]),
  );
  console.log(`Wrote ${relative(process.cwd(), out)} from ${apiReferenceFiles.document}: open it in a browser (it works offline).`);
}
