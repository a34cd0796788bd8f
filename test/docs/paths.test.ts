/**
 * Every repository path the docs name in backticks (`infra/cdk/app.ts`, `test/http`) exists, so a
 * file moved or renamed without its docs fails here instead of sending a reader nowhere. Paths
 * with placeholders (`<stage>`, `*`, `…`) are patterns, not paths, and are left alone.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docPages } from '../lib/doc-pages.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
/** Files the docs name that are built, not committed (`npm run docs`; the client's build, `npm pack` in client/). */
const built = new Set(['docs/api-reference.html', 'client/dist/']);

/** Backticked paths under the project's own top-level folders. */
export const pathsNamed = (markdown: string): string[] => [
  ...new Set([...markdown.matchAll(/`((?:functions|shared|infra|client|test|docs|\.ci|\.github)\/[\w./-]*)`/g)].map(([, path]) => path!)),
];

const pages = docPages(repoRoot);

describe('the paths the docs name', () => {
  it('exist in the repository (built files aside)', () => {
    const missing = pages.flatMap((page) =>
      pathsNamed(readFileSync(join(repoRoot, page), 'utf8'))
        .filter((path) => !built.has(path) && !existsSync(join(repoRoot, path)))
        .map((path) => `${page}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it('are found as written, and patterns with placeholders are not taken for paths', () => {
    expect(pathsNamed('see `infra/cdk/app.ts`, `test/http` and `docs/`; not `store-orders-<stage>`, `infra/*.ts` or `x/y.ts`')).toEqual([
      'infra/cdk/app.ts',
      'test/http',
      'docs/',
    ]);
    expect(pages.flatMap((page) => pathsNamed(readFileSync(join(repoRoot, page), 'utf8'))).length).toBeGreaterThan(50);
  });
});
