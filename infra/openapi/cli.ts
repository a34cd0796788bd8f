/**
 * `npm run openapi`: regenerates the committed OpenAPI document (infra/openapi/document.ts), the
 * typed-client types generated from it, and the types of the client package (client/); a test
 * fails when any of them is out of date.
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { buildOpenApiDocument, type OpenApiDocument, openApiJson } from './document.ts';

const repoRoot = resolve(import.meta.dirname, '../..');

/** The repository paths `npm run openapi` writes. */
export const openApiFiles = {
  document: 'docs/openapi.json',
  clientTypes: 'test/generated/openapi.d.ts',
  packageTypes: 'client/src/generated/openapi.ts',
} as const;

/**
 * TypeScript types of the document for `openapi-fetch` (openapi-typescript). An int64 is
 * typed `number | bigint`: a client that parses big integers exactly (docs/api.md#a-typescript-client) gets
 * bigints above 2^53 − 1, and a path parameter accepts either. With `int64: 'bigint'` (the
 * client package, which parses every int64 as one) it is typed `bigint`.
 */
export const generateClientTypes = async (
  document: OpenApiDocument = buildOpenApiDocument(),
  int64: 'number | bigint' | 'bigint' = 'number | bigint',
): Promise<string> => {
  // Loaded only here: the compiler is heavy, and npm start needs only the document.
  const { default: openapiTS, astToString, COMMENT_HEADER } = await import('openapi-typescript');
  const { default: ts } = await import('typescript');
  const bigintNode = ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword);
  const int64Node =
    int64 === 'bigint'
      ? bigintNode
      : ts.factory.createUnionTypeNode([ts.factory.createKeywordTypeNode(ts.SyntaxKind.NumberKeyword), bigintNode]);
  const ast = await openapiTS(document as Parameters<typeof openapiTS>[0], {
    transform: (schema) => (schema.format === 'int64' ? int64Node : undefined),
  });
  return `${COMMENT_HEADER}${astToString(ast)}`;
};

/** `npm run openapi`: regenerate the committed document and client types. */
if (import.meta.main) {
  const document = buildOpenApiDocument();
  await writeFile(resolve(repoRoot, openApiFiles.document), openApiJson(document));
  await writeFile(resolve(repoRoot, openApiFiles.clientTypes), await generateClientTypes(document));
  await writeFile(resolve(repoRoot, openApiFiles.packageTypes), await generateClientTypes(document, 'bigint'));
  console.log(`Wrote ${Object.values(openApiFiles).join(', ')}`);
}
