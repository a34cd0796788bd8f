#!/usr/bin/env node
/* global fetch, process */
/**
 * store-orders-openapi-types: TypeScript types of the Store Orders OpenAPI document for
 * openapi-fetch, with every int64 (`format: int64`: ids and petIds) typed `bigint`, not `number`.
 * Plain `npx openapi-typescript` types them as `number`, which a JSON.parse would make true by
 * rounding every id above 2^53 − 1; read ids exactly (docs/api.md, "A TypeScript client") and
 * type them as what they are. Needs `openapi-typescript` and `typescript` in the project.
 *
 *   npx store-orders-openapi-types openapi.json -o openapi.d.ts
 *   npx store-orders-openapi-types http://127.0.0.1:3000/v1/openapi.json -o openapi.d.ts
 */
import { realpathSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

/**
 * The types of `document` (an OpenAPI object): int64 as `bigint` (the default), or as
 * `number | bigint` for a parser that makes only ids above 2^53 − 1 bigint.
 */
export const openApiTypes = async (document, { int64 = 'bigint' } = {}) => {
  const { default: openapiTS, astToString, COMMENT_HEADER } = await import('openapi-typescript');
  const { default: ts } = await import('typescript');
  const bigintNode = ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword);
  const int64Node =
    int64 === 'bigint'
      ? bigintNode
      : ts.factory.createUnionTypeNode([ts.factory.createKeywordTypeNode(ts.SyntaxKind.NumberKeyword), bigintNode]);
  const ast = await openapiTS(document, { transform: (schema) => (schema.format === 'int64' ? int64Node : undefined) });
  return `${COMMENT_HEADER}${astToString(ast)}`;
};

const usage = 'usage: store-orders-openapi-types <openapi.json | URL> [-o <file.d.ts>]';

const main = async (args) => {
  const [input, flag, output] = args;
  if (input === undefined || input.startsWith('-') || (flag !== undefined && (flag !== '-o' || output === undefined)))
    throw new Error(usage);
  const text = /^https?:\/\//.test(input) ? await (await fetch(input)).text() : await readFile(input, 'utf8');
  const types = await openApiTypes(JSON.parse(text));
  if (output === undefined) process.stdout.write(types);
  else await writeFile(output, types);
};

// Run as a command (npx runs it through a symlink in node_modules/.bin), not imported.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  try {
    await main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
