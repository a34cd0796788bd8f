/**
 * The changelogs as Keep a Changelog 1.1.0 writes them (https://keepachangelog.com/en/1.1.0/):
 * each release, `[Unreleased]` included, groups its entries under the types Added, Changed,
 * Deprecated, Removed, Fixed and Security, each type once. A second `### Added` further down a
 * release is how a merge loses track of what a release holds; the reader of the project's own
 * changelog also finds the types in that order.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = resolve(import.meta.dirname, '../..');
const types = ['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'];

/** Each release (`## [x]`) of a changelog, with the change types its `###` headings name, in order. */
export const releasesOf = (markdown: string): { release: string; types: string[] }[] =>
  markdown
    .split(/^(?=## )/m)
    .filter((part) => part.startsWith('## '))
    .map((part) => ({
      release: /^## (\[[^\]]+\])/.exec(part)?.[1] ?? part.split('\n')[0]!,
      // "### Changed (read before upgrading)" is of type Changed.
      types: [...part.matchAll(/^### (\w+)/gm)].map(([, type]) => type!),
    }));

/** What is wrong with a changelog's releases: unknown types, types named twice, and (when `ordered`) types out of order. */
export const problemsOf = (markdown: string, ordered: boolean): string[] =>
  releasesOf(markdown).flatMap(({ release, types: named }) => [
    ...named.filter((type) => !types.includes(type)).map((type) => `${release}: unknown type ${type}`),
    ...named.filter((type, i) => named.indexOf(type) !== i).map((type) => `${release}: ### ${type} twice`),
    ...(ordered && named.some((type, i) => i > 0 && types.indexOf(type) < types.indexOf(named[i - 1]!))
      ? [`${release}: types out of order (${named.join(', ')})`]
      : []),
  ]);

describe('CHANGELOG.md', () => {
  const markdown = readFileSync(join(repoRoot, 'CHANGELOG.md'), 'utf8');

  it('has an [Unreleased] section and releases, each naming each type of change once, in Keep a Changelog order', () => {
    const releases = releasesOf(markdown);
    expect(releases[0]?.release).toBe('[Unreleased]');
    expect(releases.length).toBeGreaterThan(1);
    expect(problemsOf(markdown, true)).toEqual([]);
  });
});

describe("the client package's CHANGELOG.md", () => {
  it('names each type of change once per release (its Changed comes first, marked "read before upgrading")', () => {
    const markdown = readFileSync(join(repoRoot, 'client/CHANGELOG.md'), 'utf8');
    expect(releasesOf(markdown).length).toBeGreaterThan(1);
    expect(problemsOf(markdown, false)).toEqual([]);
  });
});

describe('the check itself', () => {
  const changelog = [
    '# Changelog',
    '## [Unreleased]',
    '### Added',
    '- a',
    '### Changed',
    '- b',
    '### Added',
    '- c',
    '## [1.0.0] - 2026-01-01',
    '### Fixed',
    '- d',
    '### Changed',
    '- e',
    '### Tweaked',
  ].join('\n');

  it('finds a type named twice in a release, one out of order, and an unknown one', () => {
    expect(problemsOf(changelog, true)).toEqual([
      '[Unreleased]: ### Added twice',
      '[Unreleased]: types out of order (Added, Changed, Added)',
      '[1.0.0]: unknown type Tweaked',
      '[1.0.0]: types out of order (Fixed, Changed, Tweaked)',
    ]);
    expect(problemsOf(changelog, false)).toEqual(['[Unreleased]: ### Added twice', '[1.0.0]: unknown type Tweaked']);
  });
});
