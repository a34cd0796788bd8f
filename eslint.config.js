// Lint: ESLint's and typescript-eslint's recommended rules (type-aware where it pays: promises).
// Formatting is Prettier's job (eslint-config-prettier turns off the rules that would clash).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import packageJson from './package.json' with { type: 'json' };

// What ships to Lambda imports only shared/ and the runtime dependencies (package.json
// "dependencies", node: builtins): never the CDK app, the local service, tools, tests or a
// devDependency, which the bundle would either lack or carry for nothing. Read from package.json,
// so a package moved between dependencies and devDependencies moves here too. One exception: the
// API's client, imported by its source entry (client/src/index.ts) so that esbuild bundles it
// (it has no dependency of its own); by its package name it would resolve to client/dist/, which
// exists only after a build.
const devDependencies = Object.keys(packageJson.devDependencies);
const shippedImports = (leavesShared) => [
  'error',
  {
    patterns: [
      {
        regex: leavesShared,
        message:
          'functions/ and shared/ ship to Lambda: import only from shared/ (infra/ and test/ do not ship), or the client as ../client/src/index.ts from shared/.',
      },
      {
        group: devDependencies.flatMap((name) => [name, `${name}/**`]),
        message: 'A devDependency is not in the Lambda bundle: functions/ and shared/ import only package.json "dependencies".',
      },
    ],
  },
];

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', 'test/generated/', 'coverage/', 'client/dist/', 'client/src/generated/'] },
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
  // Size (docs/decisions.md, "No module over 400 lines, no function over 60"): a module reads in one
  // sitting and a function as a table of contents. Tests are lists of cases, so they are exempt.
  {
    files: ['**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  // functions/<function>/ reach shared/ as ../../shared/…; shared/ is one flat folder, so ../ leaves it.
  { files: ['functions/**/*.ts'], rules: { 'no-restricted-imports': shippedImports('^\\.\\./(?!(\\.\\./)?shared/|\\.\\./client/src/index\\.ts$)') } },
  { files: ['shared/**/*.ts'], rules: { 'no-restricted-imports': shippedImports('^\\.\\./(?!client/src/index\\.ts$)') } },
  prettier,
);
