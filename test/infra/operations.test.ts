import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const repoRoot = resolve(import.meta.dirname, '../..');
const routesFile = resolve(repoRoot, 'shared/routes.ts');
const routeTableEnd = '] as const satisfies readonly Route[];';

/** shared/routes.ts with one more operation, as an engineer adding it would start. */
const routesWithRefund = () => {
  const source = readFileSync(routesFile, 'utf8');
  expect(source, 'the route table ends as this test expects').toContain(routeTableEnd);
  return source.replace(
    routeTableEnd,
    `  {
    operation: 'refundOrder',
    method: 'POST',
    path: '/store/orders/{orderId}/refund',
    handlerFile: 'functions/refund-order.ts',
    streaming: false,
    summary: 'Refund an order',
    stability: 'experimental',
  },
${routeTableEnd}`,
  );
};

/**
 * Type-checks what the stack, the local service and the OpenAPI document are built from, with the
 * project's compiler options, optionally over a route table with an extra route; the errors by file.
 */
let previous: ts.Program | undefined;
const typeErrors = (routesSource?: string) => {
  const { options } = ts.parseJsonConfigFileContent(
    ts.readConfigFile(resolve(repoRoot, 'tsconfig.json'), ts.sys.readFile).config,
    ts.sys,
    repoRoot,
  );
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, ...rest) =>
    routesSource !== undefined && resolve(fileName) === routesFile
      ? ts.createSourceFile(fileName, routesSource, language)
      : read(fileName, language, ...rest);
  // The table and its light readers (the stack's aws-cdk-lib types would triple the time; `npm run typecheck` covers it).
  const rootNames = ['infra/operations.ts', 'infra/function-settings.ts', 'infra/local/rate-limits.ts', 'infra/openapi/document.ts'];
  // The previous program's unchanged files are reused: only the route table and what reads it are checked again.
  const program = ts.createProgram({
    rootNames: rootNames.map((file) => resolve(repoRoot, file)),
    options: { ...options, noEmit: true },
    host,
    ...(previous === undefined ? {} : { oldProgram: previous }),
  });
  previous = program;
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ({
    file: diagnostic.file === undefined ? undefined : relative(repoRoot, diagnostic.file.fileName),
    message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
  }));
};

describe('the operations table', () => {
  it('compiles with one entry per route of the route table', () => {
    expect(typeErrors()).toEqual([]);
  });

  it('does not compile when a route has no entry: the compiler names the operation, in the table and not in what reads it', () => {
    const errors = typeErrors(routesWithRefund());
    expect(errors).toContainEqual({ file: 'infra/operations.ts', message: expect.stringMatching(/'refundOrder' is missing/) });
    expect(new Set(errors.map(({ file }) => file))).toEqual(new Set(['infra/operations.ts']));
  });
});
