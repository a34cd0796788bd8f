/**
 * The changelogs as Keep a Changelog 1.1.0 writes them (https://keepachangelog.com/en/1.1.0/):
 * each release, `[Unreleased]` included, groups its entries under the types Added, Changed,
 * Deprecated, Removed, Fixed and Security, each type once. A second `### Added` further down a
 * release is how a merge loses track of what a release holds; the reader of the project's own
 * changelog also finds the types in that order.
 *
 * The project's own is cut into releases, newest first: `[Unreleased]` stays short (release it when
 * it grows), each entry says in a line or two what changed for a user, and each release names the
 * last commit it holds (the repository has no remote for compare links; where the history is whole,
 * each named commit exists and descends from the one before).
 */
import { execFileSync } from 'node:child_process';
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

/** An entry is a line or two of a wide page; [Unreleased] is released before it grows past a screenful or two. */
const maxEntryCharacters = 320;
const maxUnreleasedLines = 80;

/** What breaks the shape of a changelog cut into releases: headings, their order, their commits, long entries, a long [Unreleased]. */
export const releaseProblems = (markdown: string): string[] => {
  const parts = markdown.split(/^(?=## )/m).filter((part) => part.startsWith('## '));
  const problems: string[] = [];
  if (parts[0]?.split('\n')[0] !== '## [Unreleased]') problems.push('the first section is not ## [Unreleased]');
  const unreleasedLines = (parts[0] ?? '').trimEnd().split('\n').length;
  if (unreleasedLines > maxUnreleasedLines)
    problems.push(`[Unreleased] has ${unreleasedLines} lines, more than ${maxUnreleasedLines}: cut a release`);
  const releases = parts.slice(1).map((part) => ({
    heading: /^## \[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})$/m.exec(part.split('\n')[0]!),
    commit: /^.*Up to commit `([0-9a-f]{7,40})`\.$/m.exec(part)?.[1],
    part,
  }));
  releases.forEach(({ heading, commit, part }, index) => {
    const title = part.split('\n')[0]!;
    if (heading === null) return problems.push(`${title}: not "## [x.y.z] - YYYY-MM-DD"`);
    if (commit === undefined) problems.push(`${title}: names no last commit ("Up to commit \`…\`.")`);
    const next = releases[index + 1]?.heading;
    if (next !== null && next !== undefined) {
      const [major, minor, patch] = [1, 2, 3].map((group) => Number(heading[group]) - Number(next[group]));
      if (major! < 0 || (major === 0 && (minor! < 0 || (minor === 0 && patch! <= 0)))) problems.push(`${title}: not newer than ${next[0]}`);
      if (heading[4]! < next[4]!) problems.push(`${title}: dated before ${next[0]}`);
    }
  });
  for (const entry of markdown.match(/^- .*(?:\n {2}\S.*)*/gm) ?? []) {
    const text = entry.replace(/\s+/g, ' ');
    if (text.length > maxEntryCharacters)
      problems.push(`an entry of ${text.length} characters, more than ${maxEntryCharacters}: ${text.slice(0, 60)}…`);
  }
  return problems;
};

/** The commits the releases name, newest first. */
const releaseCommits = (markdown: string): string[] =>
  [...markdown.matchAll(/^.*Up to commit `([0-9a-f]{7,40})`\.$/gm)].map(([, commit]) => commit!);

/** Whether this checkout holds the whole history (CI's shallow clone does not). */
const wholeHistory = (): boolean => {
  try {
    return execFileSync('git', ['rev-parse', '--is-shallow-repository'], { cwd: repoRoot, encoding: 'utf8' }).trim() === 'false';
  } catch {
    return false;
  }
};

describe('CHANGELOG.md', () => {
  const markdown = readFileSync(join(repoRoot, 'CHANGELOG.md'), 'utf8');

  it('has an [Unreleased] section and releases, each naming each type of change once, in Keep a Changelog order', () => {
    const releases = releasesOf(markdown);
    expect(releases[0]?.release).toBe('[Unreleased]');
    expect(releases.length).toBeGreaterThan(1);
    expect(problemsOf(markdown, true)).toEqual([]);
  });

  it('is cut into releases, newest first, each naming its last commit, with a short [Unreleased] and entries of a line or two', () => {
    expect(releaseProblems(markdown)).toEqual([]);
    expect(releaseCommits(markdown).length).toBe(releasesOf(markdown).length - 1);
  });

  it.skipIf(!wholeHistory())('names commits of this history, each release descending from the one before', () => {
    const commits = releaseCommits(markdown);
    const isAncestor = (older: string, newer: string) => {
      try {
        execFileSync('git', ['merge-base', '--is-ancestor', older, newer], { cwd: repoRoot, stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    };
    for (const [index, commit] of commits.entries()) {
      expect(isAncestor(commit, 'HEAD'), `${commit} is not in this history`).toBe(true);
      const older = commits[index + 1];
      if (older !== undefined) expect(isAncestor(older, commit), `${older} does not come before ${commit}`).toBe(true);
    }
  });
});

describe("the client package's CHANGELOG.md", () => {
  it('names each type of change once per release (its Changed comes first, marked "read before upgrading")', () => {
    const markdown = readFileSync(join(repoRoot, 'client/CHANGELOG.md'), 'utf8');
    expect(releasesOf(markdown).length).toBeGreaterThan(1);
    expect(problemsOf(markdown, false)).toEqual([]);
  });
});

describe('the release check itself', () => {
  const release = (heading: string, commit = 'abc1234', entries = ['- a change']) => [
    heading,
    '',
    `Up to commit \`${commit}\`.`,
    '',
    '### Added',
    '',
    ...entries,
    '',
  ];
  const changelog = (...releases: string[][]) => ['# Changelog', '', '## [Unreleased]', '', ...releases.flat()].join('\n');

  it('accepts releases newest first, each with its commit', () => {
    expect(releaseProblems(changelog(release('## [1.1.0] - 2026-11-24'), release('## [1.0.0] - 2026-11-23', 'def5678')))).toEqual([]);
  });

  it('finds releases out of order, a missing commit, a bad heading, a long entry and a long [Unreleased]', () => {
    expect(releaseProblems(changelog(release('## [1.0.0] - 2026-11-23'), release('## [1.1.0] - 2026-11-24')))).toEqual([
      '## [1.0.0] - 2026-11-23: not newer than ## [1.1.0] - 2026-11-24',
      '## [1.0.0] - 2026-11-23: dated before ## [1.1.0] - 2026-11-24',
    ]);
    expect(releaseProblems(changelog(['## [1.0.0] - 2026-11-23', '', '- a change']))).toEqual([
      '## [1.0.0] - 2026-11-23: names no last commit ("Up to commit `…`.")',
    ]);
    expect(releaseProblems(changelog(release('## 1.0.0 (2026-11-23)')))).toEqual(['## 1.0.0 (2026-11-23): not "## [x.y.z] - YYYY-MM-DD"']);
    expect(releaseProblems(changelog(release('## [1.0.0] - 2026-11-23', 'abc1234', [`- ${'word '.repeat(70)}`])))[0]).toMatch(
      /^an entry of 352 characters, more than 320/,
    );
    const long = ['# Changelog', '', '## [Unreleased]', '', ...Array.from({ length: 90 }, () => '- a change')].join('\n');
    expect(releaseProblems(long)).toEqual(['[Unreleased] has 92 lines, more than 80: cut a release']);
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
