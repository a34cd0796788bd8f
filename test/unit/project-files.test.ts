import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import vitestConfig from '../../vitest.config.ts';
import { docPages } from '../lib/doc-pages.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8');
const packageJson = JSON.parse(read('package.json')) as {
  version: string;
  scripts: Record<string, string>;
  engines: { node: string };
  devDependencies: Record<string, string>;
};
const major = (range: string) => Number(/(\d+)/.exec(range)?.[1]);
/** The README and every page of docs/: commands in any of them are pasted by someone. */
const docs = docPages(repoRoot);

describe('the Node requirement', () => {
  it('is stated once: engines admits Node 20 (npm only), while .nvmrc and the pinned node package name the Node 24 the project runs on', () => {
    expect(packageJson.engines.node).toBe('>=20');
    expect(read('.nvmrc').trim()).toBe('24');
    expect(major(packageJson.devDependencies.node!)).toBe(24);
    expect(process.versions.node.split('.')[0]).toBe('24');
    expect(read('README.md')).toContain('- **Node.js 20 or newer** with npm (`engines` in `package.json`)');
  });

  it('runs every TypeScript entry point through the pinned Node, never a bare node from the PATH', () => {
    expect(JSON.parse(read('cdk.json')).app).toBe('npx node infra/cdk/app.ts');
    // npm scripts put node_modules/.bin (the pinned node) first on the PATH; a README command outside them must not say `node x.ts`.
    for (const doc of docs) expect(read(doc).match(/(?<!npx )\bnode [\w./-]+\.ts\b/g) ?? [], doc).toEqual([]);
  });
});

describe('the licence', () => {
  it('is MIT, held by the project authors, and package.json says so', () => {
    expect(read('LICENSE')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} The Store Orders Service authors\n/);
    expect((JSON.parse(read('package.json')) as { license: string }).license).toBe('MIT');
  });
});

describe('the README and docs/', () => {
  it('name no issue numbers: a reader has never seen the tracker (what happened when is the CHANGELOG)', () => {
    for (const doc of docs) expect(read(doc).match(/\bissues? #?\d+/gi) ?? [], doc).toEqual([]);
  });

  it('have no placeholder in a shell block that would break a pasted command (`<…>` is a redirection to the shell)', () => {
    const shellLines = docs.flatMap((doc) =>
      [...read(doc).matchAll(/^ *```(?:sh|bash)\n([\s\S]*?)^ *```/gm)].flatMap((block) => block[1]!.split('\n')),
    );
    expect(shellLines.length).toBeGreaterThan(20);
    // What the shell reads: the line without its comment and without quoted strings.
    const code = (line: string) => line.replace(/'[^']*'|"(?:[^"\\]|\\.)*"/g, '""').replace(/(^|\s)#.*$/, '');
    expect(shellLines.filter((line) => /[<>]/.test(code(line)))).toEqual([]);
  });
});

describe('the README', () => {
  const readme = read('README.md');

  it('is an entry page of a few hundred lines at most, its test command exactly `npm test` (CI runs it)', () => {
    expect(readme.split('\n').length).toBeLessThan(300);
    expect(readme).toMatch(/^npm test\s+#/m);
  });

  it('lists the prerequisites, the AWS CLI among them for deploying, and has a deploy command among its commands', () => {
    const prerequisites = /^Prerequisites:\n\n((?:- .+\n(?: {2}.+\n)*)+)/m.exec(readme)?.[1] ?? '';
    expect(prerequisites.match(/^- /gm)).toHaveLength(3);
    expect(prerequisites).toMatch(/\*\*AWS CLI v2\*\*.*\n.*\(docs\/deploying\.md#from-an-empty-account/);
    const commands = /^## Commands\n\n```sh\n([\s\S]*?)```/m.exec(readme)?.[1] ?? '';
    expect(commands).toMatch(/^npx cdk deploy StoreOrders-staging\s+# .*docs\/deploying\.md/m);
  });

  it('has a table of contents that links every section, in the order a reader needs them', () => {
    const sections = [...readme.matchAll(/^## (.+)$/gm)].map((match) => match[1]!).filter((title) => title !== 'Contents');
    const contents = /^## Contents\n\n((?:- .+\n)+)/m.exec(readme)?.[1] ?? '';
    expect(contents.trim().split('\n')).toEqual(
      sections.map(
        (title) =>
          `- [${title}](#${title
            .toLowerCase()
            .replace(/[^a-z0-9 -]/g, '')
            .replace(/ /g, '-')})`,
      ),
    );
    // An entry page: what it is and how to start, then how it works and where things are, then where to read on.
    for (const [before, after] of [
      ['Quick start', 'How a request flows'],
      ['How a request flows', 'Layout'],
      ['Layout', 'Commands'],
      ['Commands', 'Documentation'],
    ]) {
      expect(sections.indexOf(before!), `${before} before ${after}`).toBeLessThan(sections.indexOf(after!));
    }
  });
});

describe('the test groups (vitest projects)', () => {
  const projects = (vitestConfig.test?.projects ?? []) as { test: { name: string; include: string[]; globalSetup?: string[] } }[];
  /** The folders of test/ that hold test files. */
  const folders = readdirSync(resolve(repoRoot, 'test'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && readdirSync(resolve(repoRoot, 'test', entry.name)).some((name) => name.endsWith('.test.ts')))
    .map((entry) => entry.name);

  it('are one per folder of test/ that holds tests, each run alone by `npm run test:<group>`', () => {
    expect(folders.length).toBeGreaterThan(5);
    expect(projects.map(({ test }) => test.name).sort()).toEqual([...folders].sort());
    for (const { test } of projects) {
      expect(test.include).toEqual([`test/${test.name}/**/*.test.ts`]);
      expect(packageJson.scripts[`test:${test.name}`]).toBe(`vitest run --project ${test.name}`);
    }
    // `npm test` (what CI runs) still runs every group.
    expect(packageJson.scripts.test).toBe('npm run typecheck && npm run lint && vitest run');
  });

  it('start DynamoDB Local (and so need Java) only where a file reaches it', () => {
    const needing = projects.filter(({ test }) => test.globalSetup?.includes('test/global-setup.ts')).map(({ test }) => test.name);
    expect(needing.sort()).toEqual(['client', 'http', 'integration', 'shipped']);
    expect(vitestConfig.test?.globalSetup).toBeUndefined();
    // The other groups' files use none of what reads the run's DynamoDB Local or starts one.
    const reaching =
      /^import [^;]*from '[^']*\/(?:lib\/local-api|lib\/service-process|local\/dynamodb-local)\.ts'|inject\('dynamoDbEndpoint'\)/m;
    for (const { test } of projects.filter(({ test }) => !needing.includes(test.name)))
      for (const name of readdirSync(resolve(repoRoot, 'test', test.name)).filter((file) => file.endsWith('.test.ts')))
        expect(read(`test/${test.name}/${name}`), `test/${test.name}/${name}`).not.toMatch(reaching);
  });
});
