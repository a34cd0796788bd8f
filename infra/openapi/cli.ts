/**
 * `npm run openapi`: regenerates the committed OpenAPI document (infra/openapi/document.ts), the
 * typed-client types generated from it, and the types of the client package (client/); a test
 * fails when any of them is out of date.
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { openApiTypes } from '../../client/bin/openapi-types.mjs';
import { buildOpenApiDocument, type OpenApiDocument, openApiJson } from './document.ts';

const repoRoot = resolve(import.meta.dirname, '../..');

/** The repository paths `npm run openapi` writes. */
export const openApiFiles = {
  document: 'docs/openapi.json',
  clientTypes: 'test/generated/openapi.d.ts',
  packageTypes: 'client/src/generated/openapi.ts',
} as const;

/**
 * TypeScript types of the document for `openapi-fetch` (openapi-typescript), made by the script
 * the client package ships (client/bin/openapi-types.mjs), so readers generate exactly what the
 * repository does. An int64 is typed `number | bigint` here (test/generated/, for a client that
 * makes only ids above 2^53 − 1 bigint) and `bigint` for the client package, which parses every
 * int64 as one.
 */
export const generateClientTypes = (
  document: OpenApiDocument = buildOpenApiDocument(),
  int64: 'number | bigint' | 'bigint' = 'number | bigint',
): Promise<string> => openApiTypes(document, { int64 });

/** `npm run openapi`: regenerate the committed document and client types. */
if (import.meta.main) {
  const document = buildOpenApiDocument();
  await writeFile(resolve(repoRoot, openApiFiles.document), openApiJson(document));
  await writeFile(resolve(repoRoot, openApiFiles.clientTypes), await generateClientTypes(document));
  await writeFile(resolve(repoRoot, openApiFiles.packageTypes), await generateClientTypes(document, 'bigint'));
  console.log(`Wrote ${Object.values(openApiFiles).join(', ')}`);
}
