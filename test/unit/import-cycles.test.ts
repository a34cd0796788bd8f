import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// No import loops: the structure drawn from the imports of every TypeScript file of the project
// (type-only imports, re-exports and dynamic imports included) has no cycle, so each module can be
// read, tested and moved after the ones it imports (docs/developing.md#small-decisions).
const repoRoot = resolve(import.meta.dirname, '../..');

/** Folders that hold no source of ours: installed, built, generated or ignored. */
const notSource = new Set(['node_modules', 'cdk.out', 'coverage', 'dist', 'generated']);

const sourceFiles = (dir = ''): string[] =>
  readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name.startsWith('.') || notSource.has(entry.name) ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });

/** The project files `file` (its text `text`) imports by relative path, as the TypeScript compiler's pre-processor reads them. */
const importsOf = (file: string, text: string, known: ReadonlySet<string>): string[] =>
  ts
    .preProcessFile(text, true, true)
    .importedFiles.map(({ fileName }) => fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => relative(repoRoot, resolve(repoRoot, dirname(file), spec)))
    .filter((target) => known.has(target));

/** Each file with the project files it imports. */
const importGraph = (files: ReadonlyMap<string, string>): Map<string, string[]> => {
  const known = new Set(files.keys());
  return new Map([...files].map(([file, text]) => [file, [...new Set(importsOf(file, text, known))]]));
};

/**
 * Every loop of the graph, one per strongly connected component (Tarjan), each named by one of
 * its cycles: `a.ts → b.ts → a.ts`.
 */
const importLoops = (graph: ReadonlyMap<string, readonly string[]>): string[] => {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (file: string) => {
    index.set(file, counter);
    low.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) components.push(component);
  };
  [...graph.keys()].sort().forEach((file) => index.has(file) || connect(file));
  return components.map((component) => cycleThrough(graph, new Set(component)).join(' → '));
};

/** A shortest cycle from the component's first file (by name) back to it, staying in the component. */
const cycleThrough = (graph: ReadonlyMap<string, readonly string[]>, component: ReadonlySet<string>): string[] => {
  const start = [...component].sort()[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const next of graph.get(file) ?? []) {
      if (!component.has(next)) continue;
      if (next === start) {
        const path = [file];
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
        return [...path, start];
      }
      if (!previous.has(next)) {
        previous.set(next, file);
        queue.push(next);
      }
    }
  }
  return [start];
};

describe('the import graph', () => {
  it('finds a loop through a type-only import, a re-export and a dynamic import, and names it', () => {
    const graph = importGraph(
      new Map([
        ['infra/a.ts', "import type { B } from './b.ts';\nexport type A = B;"],
        ['infra/b.ts', "export { c } from './cdk/c.ts';\nexport type B = string;"],
        ['infra/cdk/c.ts', "export const c = () => import('../a.ts');"],
        ['infra/d.ts', "import { c } from './cdk/c.ts';\nimport 'zod';"],
        ['infra/e.ts', "import { e } from './e.ts';"],
      ]),
    );
    expect(graph.get('infra/d.ts')).toEqual(['infra/cdk/c.ts']);
    expect(importLoops(graph)).toEqual(['infra/a.ts → infra/b.ts → infra/cdk/c.ts → infra/a.ts', 'infra/e.ts → infra/e.ts']);
  });

  it('reads every TypeScript file of the project', () => {
    const files = sourceFiles();
    expect(files).toEqual(
      expect.arrayContaining(['infra/registry.ts', 'functions/list-orders/handler.ts', 'test/unit/import-cycles.test.ts']),
    );
    expect(files.some((file) => file.includes('node_modules/') || file.includes('/generated/'))).toBe(false);
    expect(existsSync(join(repoRoot, 'client/src/generated'))).toBe(true);
  });

  it('has no loop: no module imports, through others, a module that imports it', () => {
    const files = sourceFiles();
    const graph = importGraph(new Map(files.map((file) => [file, readFileSync(join(repoRoot, file), 'utf8')])));
    expect([...graph.values()].flat().length).toBeGreaterThan(files.length);
    expect(importLoops(graph)).toEqual([]);
  });
});
