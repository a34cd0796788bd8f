import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// shared/ is exactly what the functions import: what ships to Lambda imports nothing that does
// not ship (the lint rule in eslint.config.js), and nothing sits in shared/ that no function reaches.
const repoRoot = resolve(import.meta.dirname, '../..');

describe('the import rule for functions/ and shared/ (eslint.config.js)', () => {
  // The project's own configuration, only this rule, and no type information (the snippets are not files).
  const eslint = new ESLint({
    cwd: repoRoot,
    ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  });
  const ruleErrors = async (code: string, filePath: string) => {
    const [result] = await eslint.lintText(code, { filePath: join(repoRoot, filePath) });
    return (result?.messages ?? []).map((message) => `${message.ruleId}: ${message.message}`);
  };

  it('refuses, in shared/, an import of infra/, of test/ and of a devDependency', async () => {
    const errors = await ruleErrors(
      [
        "import { stageConfigs } from '../infra/stage-config.ts';",
        "import { order } from '../test/lib/local-api.ts';",
        "import { App } from 'aws-cdk-lib';",
        "import { Duration } from 'aws-cdk-lib/core';",
        'export const all = [stageConfigs, order, App, Duration];',
      ].join('\n'),
      'shared/x.ts',
    );
    expect(errors).toHaveLength(4);
    expect(errors.every((error) => error.startsWith('no-restricted-imports:'))).toBe(true);
  });

  it('refuses, in functions/, an import of infra/ and of a devDependency', async () => {
    const errors = await ruleErrors(
      "import { createApp } from '../infra/cdk/app.ts';\nimport { z } from '@asteasolutions/zod-to-openapi';\nexport const all = [createApp, z];",
      'functions/x.ts',
    );
    expect(errors).toHaveLength(2);
  });

  it("allows shared/ the client's source entry and nothing else of client/ (dist/ exists only after a build)", async () => {
    expect(
      await ruleErrors(
        "import { StoreOrdersClient } from '../client/src/index.ts';\nexport const all = [StoreOrdersClient];",
        'shared/x.ts',
      ),
    ).toEqual([]);
    const errors = await ruleErrors(
      [
        "import { exchange } from '../client/src/http.ts';",
        "import { StoreOrdersClient } from '../client/dist/index.js';",
        "import { smoke } from '../client/src/index.ts.bak';",
        'export const all = [exchange, StoreOrdersClient, smoke];',
      ].join('\n'),
      'shared/x.ts',
    );
    expect(errors).toHaveLength(3);
    expect(
      await ruleErrors(
        "import { StoreOrdersClient } from '../client/src/index.ts';\nexport const all = [StoreOrdersClient];",
        'functions/x.ts',
      ),
    ).toHaveLength(1);
  });

  it('allows shared/, a runtime dependency and a node: builtin', async () => {
    expect(
      await ruleErrors(
        "import { createHash } from 'node:crypto';\nimport middy from '@middy/core';\nimport { routes } from '../shared/routes.ts';\nexport const all = [createHash, middy, routes];",
        'functions/x.ts',
      ),
    ).toEqual([]);
    expect(
      await ruleErrors(
        "import { z } from 'zod';\nimport { apiError } from './errors.ts';\nexport const all = [z, apiError];",
        'shared/x.ts',
      ),
    ).toEqual([]);
  });
});

/** The repository files `file` imports by relative path (`from '…'`, `import '…'`, `import('…')`; types included). */
const relativeImportsOf = (file: string): string[] =>
  [...readFileSync(join(repoRoot, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map(([, spec]) =>
    relative(repoRoot, resolve(repoRoot, dirname(file), spec!)),
  );

describe('shared/', () => {
  it('holds only files some function (functions/*.ts) reaches through its imports', () => {
    const entryPoints = readdirSync(join(repoRoot, 'functions'), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? [`functions/${entry.name}/handler.ts`] : entry.name.endsWith('.ts') ? [`functions/${entry.name}`] : [],
    );
    const reached = new Set<string>();
    const visit = (file: string) => {
      if (reached.has(file)) return;
      reached.add(file);
      relativeImportsOf(file).forEach(visit);
    };
    entryPoints.forEach(visit);
    const shared = readdirSync(join(repoRoot, 'shared'), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.ts'))
      .map((name) => `shared/${name}`);
    expect(entryPoints.length).toBeGreaterThan(0);
    expect(shared.filter((file) => !reached.has(file))).toEqual([]);
  });
});
