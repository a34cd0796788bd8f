import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { openApiFiles } from '../../infra/openapi/cli.ts';

// The house by operation: each function a folder under functions/ (its handler, the modules only
// it uses, its contract), shared/ the kernel two or more functions use. What ships to Lambda imports
// nothing that does not ship, a handler never its contract (the lint rules in eslint.config.js), and
// nothing sits in shared/ that fewer than two functions reach.
const repoRoot = resolve(import.meta.dirname, '../..');

/** The project's own configuration, only `rules`, and no type information (the snippets are not files). */
const linter = (...rules: string[]) => {
  const eslint = new ESLint({
    cwd: repoRoot,
    ruleFilter: ({ ruleId }) => rules.includes(ruleId),
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  });
  return async (code: string, filePath: string) => {
    const [result] = await eslint.lintText(code, { filePath: join(repoRoot, filePath) });
    return (result?.messages ?? []).map((message) => `${message.ruleId}: ${message.message}`);
  };
};

/** The lines of `code` (1-based) that `rule` refuses in `filePath`. */
const refusedLines = async (rule: string, code: string, filePath: string) => {
  const eslint = new ESLint({
    cwd: repoRoot,
    ruleFilter: ({ ruleId }) => ruleId === rule,
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  });
  const [result] = await eslint.lintText(code, { filePath: join(repoRoot, filePath) });
  return [...new Set((result?.messages ?? []).map((message) => message.line))].sort();
};

describe('the import rules for functions/, shared/ and infra/ (eslint.config.js)', () => {
  const ruleErrors = linter('no-restricted-imports');

  it('refuses, in shared/, an import of functions/, infra/, test/, the client and a devDependency', async () => {
    const errors = await ruleErrors(
      [
        "import { stageConfigs } from '../infra/stage-config.ts';",
        "import { order } from '../test/lib/local-api.ts';",
        "import { route } from '../functions/list-orders/route.ts';",
        "import { StoreOrdersClient } from '../client/src/index.ts';",
        "import { App } from 'aws-cdk-lib';",
        "import { Duration } from 'aws-cdk-lib/core';",
        'export const all = [stageConfigs, order, route, StoreOrdersClient, App, Duration];',
      ].join('\n'),
      'shared/x.ts',
    );
    expect(errors).toHaveLength(6);
    expect(errors.every((error) => error.startsWith('no-restricted-imports:'))).toBe(true);
  });

  it('refuses, in a function folder, an import of infra/, of another function, of a devDependency and of any contract', async () => {
    const code = [
      "import { createApp } from '../../infra/cdk/app.ts';",
      "import { z } from '@asteasolutions/zod-to-openapi';",
      "import { cursorKeyRing } from '../list-orders-paged/cursor-keys.ts';",
      "import { cancelOrderContract } from './contract.ts';",
      "import { listOrdersContract } from '../list-orders/contract.ts';",
      'export const all = [createApp, z, cursorKeyRing, cancelOrderContract, listOrdersContract];',
    ].join('\n');
    expect(await refusedLines('no-restricted-imports', code, 'functions/cancel-order/handler.ts')).toEqual([1, 2, 3, 4, 5]);
    const errors = await ruleErrors(code, 'functions/cancel-order/handler.ts');
    expect(errors.filter((error) => error.includes('never imports it'))).toHaveLength(2);
  });

  it('allows a function its own folder, shared/, a runtime dependency and a node: builtin', async () => {
    expect(
      await ruleErrors(
        [
          "import { createHash } from 'node:crypto';",
          "import middy from '@middy/core';",
          "import { httpMiddleware } from '../../shared/http.ts';",
          "import { route } from './route.ts';",
          'export const all = [createHash, middy, httpMiddleware, route];',
        ].join('\n'),
        'functions/cancel-order/handler.ts',
      ),
    ).toEqual([]);
    expect(
      await ruleErrors(
        "import { z } from 'zod';\nimport { apiError } from './errors.ts';\nexport const all = [z, apiError];",
        'shared/x.ts',
      ),
    ).toEqual([]);
  });

  it("allows a function the client's source entry and nothing else of client/ (dist/ exists only after a build)", async () => {
    expect(
      await ruleErrors(
        "import { StoreOrdersClient } from '../../client/src/index.ts';\nexport const all = [StoreOrdersClient];",
        'functions/canary/smoke-check.ts',
      ),
    ).toEqual([]);
    const errors = await ruleErrors(
      [
        "import { exchange } from '../../client/src/http.ts';",
        "import { StoreOrdersClient } from '../../client/dist/index.js';",
        "import { smoke } from '../../client/src/index.ts.bak';",
        'export const all = [exchange, StoreOrdersClient, smoke];',
      ].join('\n'),
      'functions/canary/smoke-check.ts',
    );
    expect(errors).toHaveLength(3);
  });

  it('lets a contract import what the house states (infra/), and infra/ read contracts through the registry alone', async () => {
    expect(
      await ruleErrors(
        "import type { OperationContract } from '../../infra/function-contract.ts';\nimport { stages } from '../../infra/stage-config.ts';\nexport const all = [stages];\nexport type C = OperationContract;",
        'functions/cancel-order/contract.ts',
      ),
    ).toEqual([]);
    expect(
      await ruleErrors(
        "import { cancelOrderContract } from '../functions/cancel-order/contract.ts';\nexport const all = [cancelOrderContract];",
        'infra/registry.ts',
      ),
    ).toEqual([]);
    expect(
      await ruleErrors(
        "import { cancelOrderContract } from '../../functions/cancel-order/contract.ts';\nexport const all = [cancelOrderContract];",
        'infra/cdk/x.ts',
      ),
    ).toHaveLength(1);
  });
});

describe('the rule against re-export shims (eslint.config.js)', () => {
  const ruleErrors = linter('no-restricted-syntax');

  it('refuses a module that re-exports another, and allows the client package entry', async () => {
    const code = "export { tierNames } from './tiers.ts';\nexport type { Tier } from './tiers.ts';\nexport * from './names.ts';";
    expect(await ruleErrors(code, 'infra/stage-config.ts')).toHaveLength(3);
    expect(await ruleErrors("export { StoreOrdersClient } from './client.ts';", 'client/src/index.ts')).toEqual([]);
  });
});

/** The repository files `file` imports by relative path (`from '…'`, `import '…'`, `import('…')`; types included). */
const relativeImportsOf = (file: string): string[] =>
  [...readFileSync(join(repoRoot, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map(([, spec]) =>
    relative(repoRoot, resolve(repoRoot, dirname(file), spec!)),
  );

/** Every repository file a module reaches through its imports, itself included: what its bundle is made of. */
const reachedFrom = (entry: string): Set<string> => {
  const reached = new Set<string>();
  const visit = (file: string) => {
    if (reached.has(file)) return;
    reached.add(file);
    relativeImportsOf(file).forEach(visit);
  };
  visit(entry);
  return reached;
};

const functionFolders = readdirSync(join(repoRoot, 'functions'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
/** Each function's bundle: what its handler reaches. */
const bundles = new Map(functionFolders.map((folder) => [folder, reachedFrom(`functions/${folder}/handler.ts`)]));
const sourcesOf = (dir: string) =>
  readdirSync(join(repoRoot, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => `${dir}/${name}`);

describe('functions/', () => {
  it('holds one folder per function, each with its handler, and nothing beside them but the index', () => {
    expect(functionFolders).toEqual(
      expect.arrayContaining(['authorizer', 'list-orders', 'list-orders-paged', 'cancel-order', 'pre-traffic-hook', 'canary']),
    );
    expect(readdirSync(join(repoRoot, 'functions')).filter((name) => !functionFolders.includes(name))).toEqual(['README.md']);
  });

  it("holds in each folder only what its own function reaches (its contract and known answers aside), and no other function's bundle reaches in", () => {
    for (const folder of functionFolders) {
      const files = sourcesOf(`functions/${folder}`).filter((file) => !/\/(contract|known-answers)\.ts$/.test(file));
      expect(
        files.filter((file) => !bundles.get(folder)!.has(file)),
        `functions/${folder}/: files its handler does not reach`,
      ).toEqual([]);
      for (const [other, bundle] of bundles)
        if (other !== folder)
          expect(
            files.filter((file) => bundle.has(file)),
            `${other} reaches into functions/${folder}/`,
          ).toEqual([]);
    }
  });

  it("gives each function with a contract its known answers beside it, which no function's own handler reaches (the registry hands them to the probes)", () => {
    for (const folder of functionFolders.filter((name) => existsSync(join(repoRoot, `functions/${name}/contract.ts`)))) {
      expect(existsSync(join(repoRoot, `functions/${folder}/known-answers.ts`)), folder).toBe(true);
      for (const [other, bundle] of bundles) expect(bundle.has(`functions/${folder}/known-answers.ts`), `${other} reaches it`).toBe(false);
    }
  });

  it('ships no contract: no bundle reaches a contract.ts', () => {
    for (const [folder, bundle] of bundles)
      expect(
        [...bundle].filter((file) => file.endsWith('contract.ts')),
        folder,
      ).toEqual([]);
  });
});

describe('shared/', () => {
  it('holds only files two or more functions reach through their imports (one function keeps its own in its folder)', () => {
    const consumers = (file: string) => [...bundles].filter(([, bundle]) => bundle.has(file)).map(([folder]) => folder);
    const shared = sourcesOf('shared');
    expect(shared.length).toBeGreaterThan(5);
    expect(
      Object.fromEntries(shared.map((file) => [file, consumers(file)]).filter(([, folders]) => folders!.length < 2)),
      'shared/ files with fewer than two function consumers: move each into its function folder',
    ).toEqual({});
  });
});

/**
 * Base names two files may share, each for the same meaning in every folder it is in. Any other
 * name says what its file is wherever it is read: an import, a stack trace, a review.
 */
const sharedBaseNames = new Map([
  ['README.md', "each folder's index"],
  ['handler.ts', "each function's handler (functions/<function>/)"],
  ['route.ts', "each operation's route (functions/<operation>/)"],
  ['contract.ts', "each function's contract (functions/<function>/)"],
  ['known-answers.ts', "each function's known answers, run by the probes (functions/<function>/, test/fixtures/<operation>/)"],
]);

/** The base names found in more than one file of `files`, with those files, unless listed in sharedBaseNames. */
const twiceNamed = (files: string[]) => {
  const byName = Map.groupBy(files, (file) => file.split('/').at(-1)!);
  return Object.fromEntries([...byName].filter(([name, found]) => found.length > 1 && !sharedBaseNames.has(name)));
};
/** Files under `dir` (relative to the repository), generated output and dependencies aside. */
const filesUnder = (dir: string) =>
  readdirSync(join(repoRoot, dir), { recursive: true, encoding: 'utf8', withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(repoRoot, join(entry.parentPath, entry.name)))
    .filter((file) => !/(^|\/)(node_modules|dist|cdk\.out)\//.test(file));

describe('file names', () => {
  it("give no two of the service's files outside test/ one base name for two meanings (the client package on its own)", () => {
    const rootFiles = readdirSync(repoRoot, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name);
    const service = [...rootFiles, ...['functions', 'shared', 'infra', 'docs'].flatMap(filesUnder)];
    expect(service.length).toBeGreaterThan(100);
    expect(twiceNamed(service), 'rename one of each pair to say what it is').toEqual({});
    expect(twiceNamed(filesUnder('client/src'))).toEqual({});
  });

  it("hold the OpenAPI document's types once: the file `npm run openapi` writes (test/client/contract.test.ts keeps it current)", () => {
    const generated = ['functions', 'shared', 'infra', 'client', 'test']
      .flatMap(filesUnder)
      .filter((file) => /\.(ts|mts|cts)$/.test(file))
      .filter((file) =>
        readFileSync(join(repoRoot, file), 'utf8').startsWith('/**\n * This file was auto-generated by openapi-typescript.'),
      );
    expect(generated).toEqual([openApiFiles.packageTypes]);
  });

  it('are told apart by the check: a pair with two meanings fails it', () => {
    expect(twiceNamed(['infra/cdk/tables.ts', 'infra/local/tables.ts', 'functions/a/handler.ts', 'functions/b/handler.ts'])).toEqual({
      'tables.ts': ['infra/cdk/tables.ts', 'infra/local/tables.ts'],
    });
  });
});
