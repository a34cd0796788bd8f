/**
 * Each folder's README.md is its table of contents: every file and subfolder in it is named there
 * (as `name`), and every name there exists. A file added without its line, or moved without its
 * index, fails here, so the indexes keep describing the layout (issue 22).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = resolve(import.meta.dirname, '../..');

/** Built or installed, never committed: not indexed (client/dist/ is what `npm pack` builds). */
const unindexed = new Set(['node_modules', 'dist']);

/** The folders that carry an index: every folder under functions/, shared/, infra/ and client/, and test/, test/lib, test/perf. */
const indexedFolders = (): string[] => {
  const walk = (dir: string): string[] => [
    dir,
    ...readdirSync(join(repoRoot, dir), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !unindexed.has(entry.name))
      .flatMap((entry) => walk(`${dir}/${entry.name}`)),
  ];
  return [...['functions', 'shared', 'infra', 'client'].flatMap(walk), 'test', 'test/lib', 'test/perf'];
};

/** What an index names: the entry of each backticked name starting a list item ("- `gateway.ts` — …", "- `cdk/` — …", "- `monitoring/alarms.ts` — …" names monitoring). */
export const namesListed = (markdown: string): string[] => [
  ...new Set([...markdown.matchAll(/^- `([^`]+)`/gm)].map(([, name]) => name!.split('/')[0]!)),
];

const entriesOf = (dir: string): string[] =>
  readdirSync(join(repoRoot, dir)).filter(
    (name) => name !== 'README.md' && !name.startsWith('.') && !unindexed.has(name) && !name.endsWith('.tgz'),
  );

describe('each folder index', () => {
  it.each(indexedFolders())('%s/README.md names exactly what the folder holds', (dir) => {
    const index = join(repoRoot, dir, 'README.md');
    expect(existsSync(index), `${relative(repoRoot, index)} is missing`).toBe(true);
    const listed = namesListed(readFileSync(index, 'utf8'));
    const present = entriesOf(dir);
    expect({ unlisted: present.filter((name) => !listed.includes(name)), gone: listed.filter((name) => !present.includes(name)) }).toEqual({
      unlisted: [],
      gone: [],
    });
  });

  it('reads list items as names, so a missing or stale line is seen', () => {
    expect(namesListed('# x/\n\n- `a.ts` — one\n- `sub/` — two\n- `sub/b.ts` — three\ntext `c.ts` in prose\n')).toEqual(['a.ts', 'sub']);
  });
});
