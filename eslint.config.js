// Lint: ESLint's and typescript-eslint's recommended rules (type-aware where it pays: promises).
// Formatting is Prettier's job (eslint-config-prettier turns off the rules that would clash).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import packageJson from './package.json' with { type: 'json' };

// What ships to Lambda (functions/<function>/ and shared/) imports only its own folder, shared/ and
// the runtime dependencies (package.json "dependencies", node: builtins): never the CDK app, the
// local service, tools, tests, another function's folder or a devDependency, which the bundle
// would either lack or carry for nothing. Read from package.json, so a package moved between
// dependencies and devDependencies moves here too. One exception: the API's client, imported by the
// canary's smoke check through its source entry (client/src/index.ts) so that esbuild bundles it (it
// has no dependency of its own); by its package name it would resolve to client/dist/, which
// exists only after a build.
const devDependencies = Object.keys(packageJson.devDependencies);
const shippedImports = (...patterns) => [
  'error',
  {
    patterns: [
      ...patterns,
      {
        group: devDependencies.flatMap((name) => [name, `${name}/**`]),
        message: 'A devDependency is not in the Lambda bundle: functions/ and shared/ import only package.json "dependencies".',
      },
    ],
  },
];

// A function's contract (functions/<function>/contract.ts) states what the rest of the house needs
// to know about it and does not ship: nothing that ships imports it, so the handler stays small;
// infra/ reads the contracts through the registry (infra/registry.ts) alone.
const contractModule = '(^|/)contract\\.ts$';
const anotherContract = '(^|/)functions/[^/]+/contract\\.ts$';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', 'coverage/', 'client/dist/', 'client/src/generated/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  // Size (docs/developing.md#small-decisions): a module reads in one
  // sitting and a function as a table of contents. Tests are lists of cases, so they are exempt.
  {
    files: ['**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  // functions/<function>/ reach their own folder as ./… and shared/ as ../../shared/…; shared/ is one flat folder, so ../ leaves it.
  {
    files: ['functions/**/*.ts'],
    ignores: ['functions/*/contract.ts'],
    rules: {
      'no-restricted-imports': shippedImports(
        {
          regex: '^\\.\\./(?!\\.\\./shared/|\\.\\./client/src/index\\.ts$)',
          message:
            'functions/<function>/ ships to Lambda: import its own folder (./…) and shared/ (../../shared/…) only; infra/, test/ and other functions do not ship with it.',
        },
        {
          regex: contractModule,
          message:
            'A contract does not ship: a handler never imports it. What the handler needs at run time (its route) goes in a module of its own that the contract reads.',
        },
      ),
    },
  },
  {
    files: ['shared/**/*.ts'],
    rules: {
      'no-restricted-imports': shippedImports({
        regex: '^\\.\\./',
        message: 'shared/ ships to Lambda: import only from shared/ (functions/, infra/ and test/ do not ship with it).',
      }),
    },
  },
  {
    files: ['infra/**/*.ts'],
    ignores: ['infra/registry.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: anotherContract, message: 'infra/ reads the contracts through the registry (infra/registry.ts).' }] },
      ],
    },
  },
  // No re-export shims: whoever needs a thing imports it from where it lives. The client package's
  // entry (its public API) and shared/zod.ts (zod/mini with English messages) are the exceptions.
  {
    files: ['**/*.ts'],
    ignores: ['client/src/index.ts', 'shared/zod.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportNamedDeclaration[source]', message: 'No re-export: import it from the module it lives in.' },
        { selector: 'ExportAllDeclaration', message: 'No re-export: import it from the module it lives in.' },
      ],
    },
  },
  prettier,
);
