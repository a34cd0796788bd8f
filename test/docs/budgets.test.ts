/**
 * The reader pages stay readable in one sitting each: the deploy guide a deployer follows from an
 * empty account to a verified production deploy at most 3,000 words, no reader page over 6,500,
 * and README plus every page of docs/ (docs/reference/ included) within the budget below. The
 * decision records (docs/decisions/) have their own bounds, 40 records and 12,000 words, held by
 * decision-records.test.ts.
 *
 * Counting rule: the words of a page's prose are its whitespace-separated tokens outside fenced
 * code blocks (``` or ~~~) that hold a letter or a digit. Headings, tables, lists, link texts and
 * URLs, inline code count; code blocks do not, nor tokens of punctuation alone (a table's `|`,
 * a `·` cell, a list's `-`).
 *
 * The total is held to 25,000 words: a page that grows makes room by cutting another.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = resolve(import.meta.dirname, '../..');

export const maxGuideWords = 3_000;
export const maxPageWords = 6_500;
export const targetTotalWords = 25_000;
export const maxTotalWords = targetTotalWords;

/** The words of a page's prose, by the rule in the header. */
export const proseWords = (markdown: string): number => {
  let fence: string | undefined;
  const prose: string[] = [];
  for (const line of markdown.split('\n')) {
    const marker = /^ *(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      continue;
    }
    if (fence === undefined) prose.push(line);
  }
  return prose
    .join('\n')
    .split(/\s+/)
    .filter((token) => /[\p{L}\p{N}]/u.test(token)).length;
};

/** README.md and every Markdown page under docs/ but the decision records. */
export const readerPages = (root: string): string[] => {
  const under = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) return path === 'docs/decisions' ? [] : under(path);
      return entry.name.endsWith('.md') ? [path] : [];
    });
  return ['README.md', ...under('docs')].sort();
};

/** What breaks a budget: the guide, a page, or the total over its words. */
export const budgetProblems = (words: ReadonlyMap<string, number>, ceiling = maxTotalWords): string[] => {
  const total = [...words.values()].reduce((sum, count) => sum + count, 0);
  return [
    ...((words.get('docs/deploying.md') ?? 0) > maxGuideWords
      ? [`docs/deploying.md: ${words.get('docs/deploying.md')} words, more than ${maxGuideWords}`]
      : []),
    ...[...words].filter(([, count]) => count > maxPageWords).map(([page, count]) => `${page}: ${count} words, more than ${maxPageWords}`),
    ...(total > ceiling ? [`${total} words in all, more than ${ceiling}`] : []),
  ];
};

describe('the reader pages', () => {
  const pages = readerPages(repoRoot);
  const words = new Map(pages.map((page) => [page, proseWords(readFileSync(join(repoRoot, page), 'utf8'))]));

  it('include the README, the guide, the reference pages and the runbook', () => {
    expect(pages).toEqual(
      expect.arrayContaining(['README.md', 'docs/deploying.md', 'docs/runbook.md', 'docs/api.md', 'docs/reference/alarms.md']),
    );
    expect(pages.some((page) => page.startsWith('docs/decisions/'))).toBe(false);
  });

  it(`keep the guide within ${maxGuideWords} words, each page within ${maxPageWords}, and the total within its ceiling`, () => {
    expect(budgetProblems(words)).toEqual([]);
    expect(maxTotalWords).toBeGreaterThanOrEqual(targetTotalWords);
  });
});

describe('the word count itself', () => {
  it('counts words of prose, headings and tables, and neither code blocks nor punctuation alone', () => {
    const page = [
      '# Two words',
      '',
      'One `inline` word, then — a dash.',
      '',
      '```sh',
      'npm run not counted',
      '```',
      '',
      '| a | · |',
      '|---|---|',
    ].join('\n');
    expect(proseWords(page)).toBe(2 + 6 + 1);
    expect(proseWords('~~~\nhidden\n~~~\n````md\n```\nstill hidden\n````\nseen')).toBe(1);
  });

  it('reports the guide, a page and the total over their budgets', () => {
    const within = new Map([
      ['docs/deploying.md', 3_000],
      ['docs/api.md', 6_500],
    ]);
    expect(budgetProblems(within, 9_500)).toEqual([]);
    expect(
      budgetProblems(
        new Map([
          ['docs/deploying.md', 3_001],
          ['docs/api.md', 6_501],
        ]),
        9_500,
      ),
    ).toEqual([
      'docs/deploying.md: 3001 words, more than 3000',
      'docs/api.md: 6501 words, more than 6500',
      '9502 words in all, more than 9500',
    ]);
  });
});
