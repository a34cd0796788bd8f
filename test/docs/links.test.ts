/**
 * Every relative link in the project's Markdown resolves: README.md, docs/**, each folder's
 * README.md index and the CHANGELOG. A link names an existing file or folder inside the
 * repository, and a `#anchor` names a heading (or an explicit `<a id>`) of the page it points
 * at, slugged as GitHub slugs headings (github-slugger, GitHub's own algorithm: lower case,
 * punctuation but `-` and `_` dropped, spaces to `-`, a repeated heading gets `-1`, `-2`, …).
 * External links (a URL scheme) are not fetched: this machine and CI reach no web.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import GithubSlugger from 'github-slugger';
import { afterAll, describe, expect, it } from 'vitest';

const repoRoot = resolve(import.meta.dirname, '../..');
/** Folders whose Markdown is not the project's own: installed, built or local state. */
const skipped = new Set(['node_modules', '.git', 'cdk.out', '.local']);

/** Every Markdown file under `root`, as paths relative to it. */
export const markdownFiles = (root: string, dir = root): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return skipped.has(entry.name) ? [] : markdownFiles(root, path);
    return entry.name.endsWith('.md') ? [relative(root, path)] : [];
  });

/** The page's lines, with those of fenced code blocks blanked. */
const outsideFences = (markdown: string): string[] => {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const marker = /^ *(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return '';
    }
    return fence === undefined ? line : '';
  });
};

/** The page's lines outside fenced code blocks, with inline code spans blanked (a link in code is an example). */
const prose = (markdown: string): string[] => outsideFences(markdown).map((line) => line.replace(/(`+)[^`]*?\1/g, ''));

/** The anchors a page offers: its headings, slugged as GitHub does, and explicit `<a id>`/`<a name>`. */
export const anchorsOf = (markdown: string): Set<string> => {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const line of outsideFences(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      // GitHub slugs the heading's text: a link's text, not its target; code without its backticks; no tags.
      const text = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
      anchors.add(slugger.slug(text));
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  }
  return anchors;
};

/** The link targets of a page: inline links and images, and reference definitions. */
export const linksOf = (markdown: string): string[] =>
  prose(markdown).flatMap((line) => [
    ...[...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]!),
    ...[...line.matchAll(/^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/g)].map((match) => match[1]!),
  ]);

/** What is wrong with each relative link of one page (`file`, relative to `root`): nothing when all resolve. */
export const brokenLinks = (root: string, file: string): string[] => {
  const markdown = readFileSync(join(root, file), 'utf8');
  const problems: string[] = [];
  for (const link of linksOf(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:: not fetched here
    const [rawPath = '', anchor] = link.split('#', 2);
    const path = decodeURIComponent(rawPath);
    const target = path === '' ? join(root, file) : resolve(root, dirname(file), path);
    if (target !== root && !target.startsWith(root + sep)) {
      problems.push(`${file}: ${link} leaves the repository`);
      continue;
    }
    if (!existsSync(target)) {
      problems.push(`${file}: ${link} names no file (${relative(root, target)})`);
      continue;
    }
    if (anchor === undefined) continue;
    // A folder's anchors are its README's, as GitHub shows it.
    const page = statSync(target).isDirectory() ? join(target, 'README.md') : target;
    if (!page.endsWith('.md') || !existsSync(page)) {
      if (!/^L\d+(?:-L\d+)?$/.test(anchor)) problems.push(`${file}: ${link} has an anchor, but its target is not a Markdown page`);
      continue;
    }
    if (!anchorsOf(readFileSync(page, 'utf8')).has(decodeURIComponent(anchor)))
      problems.push(`${file}: ${link} names no heading of ${relative(root, page)}`);
  }
  return problems;
};

describe("the project's Markdown", () => {
  const files = markdownFiles(repoRoot);

  it('includes the README, every page of docs/ and every folder index there is', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/runbook.md', 'docs/decisions.md']));
    for (const folder of ['functions', 'shared', 'infra', 'test'])
      if (existsSync(join(repoRoot, folder, 'README.md'))) expect(files).toContain(`${folder}/README.md`);
  });

  it('links only to files that exist and to headings those pages have', () => {
    expect(files.flatMap((file) => brokenLinks(repoRoot, file))).toEqual([]);
    // The check above looked at something: the README alone links to every page of docs/.
    expect(linksOf(readFileSync(join(repoRoot, 'README.md'), 'utf8')).length).toBeGreaterThan(5);
  });
});

/** The pages of docs/ written for one reader each: they open with whom they are for, then their contents. */
const readerPages = [
  'api.md',
  'developing.md',
  'deploying.md',
  'operating.md',
  'reference/stages.md',
  'reference/alarms.md',
  'reference/costs.md',
  'reference/troubleshooting.md',
];

describe.each(readerPages)('docs/%s', (name) => {
  const markdown = readFileSync(join(repoRoot, 'docs', name), 'utf8');

  it('says first whom it is for, then lists every section it has, linked', () => {
    const [title, forWhom] = markdown.split('\n\n');
    expect(title).toMatch(/^# /);
    expect(forWhom).toMatch(/^For \*\*[^*]+\*\*/);
    const contents = /^\*\*Contents\*\*\n\n((?:(?: {2})?- .+\n)+)/m.exec(markdown)?.[1] ?? '';
    const slugger = new GithubSlugger();
    const headings = outsideFences(markdown)
      .map((line) => /^(##|###) (.+)$/.exec(line))
      .filter((match) => match !== null)
      .map(([, level, text]) => `${level === '###' ? '  ' : ''}- [${text}](#${slugger.slug(text!)})`);
    expect(contents.trimEnd().split('\n')).toEqual(headings);
  });
});

/** Code, configuration and the published OpenAPI document point readers at `docs/<page>.md#anchor` (or `README.md#anchor`). */
const codeFiles = (dir = repoRoot): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return skipped.has(entry.name) ? [] : codeFiles(path);
    return /\.(ts|js|ya?ml|json|sh)$/.test(entry.name) || entry.name === '.env.example' || dirname(path).endsWith(`${sep}.ci`)
      ? [path]
      : [];
  });

describe('pointers into the docs from code, configuration and the OpenAPI document', () => {
  it('name pages that exist and headings those pages have', () => {
    const self = resolve(import.meta.filename);
    const pointers = codeFiles()
      .filter((path) => path !== self && !path.endsWith('package-lock.json'))
      .flatMap((path) =>
        [...readFileSync(path, 'utf8').matchAll(/\b((?:docs\/[\w/-]+|README)\.md)#([\w-]+)/g)].map(([, page, anchor]) => ({
          from: relative(repoRoot, path),
          page: page!,
          anchor: anchor!,
        })),
      );
    // The OpenAPI document and the code comments do point somewhere: the check is not vacuous.
    expect(pointers.map(({ from }) => from)).toEqual(expect.arrayContaining(['docs/openapi.json', 'shared/dynamo.ts', '.env.example']));
    const broken = pointers.filter(
      ({ page, anchor }) => !existsSync(join(repoRoot, page)) || !anchorsOf(readFileSync(join(repoRoot, page), 'utf8')).has(anchor),
    );
    expect(broken.map(({ from, page, anchor }) => `${from}: ${page}#${anchor}`)).toEqual([]);
  });
});

describe('.env.example, the first file a newcomer edits', () => {
  it('points at the docs only as `page.md#anchor`, which the check above resolves, never by a section title', () => {
    const mentions = readFileSync(join(repoRoot, '.env.example'), 'utf8')
      .split('\n')
      .filter((line) => /README|\.md\b|→/.test(line));
    expect(mentions.length).toBeGreaterThan(0);
    for (const line of mentions) expect(line.replace(/\b(?:docs\/[\w/-]+|README)\.md#[\w-]+/g, '')).not.toMatch(/README|\.md\b|→/);
  });
});

describe('the link check itself', () => {
  const root = mkdtempSync(join(tmpdir(), 'links-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write(
    'docs/guide.md',
    [
      '# Guide',
      '## Limits of the deployed list',
      '## What the account needs (`npm run preflight`)',
      '## Notes',
      '## Notes',
      '<a id="custom"></a>',
      '```sh',
      '[not a link](nowhere.md)',
      '```',
      'Inline `[code](nowhere.md)` is not a link either.',
    ].join('\n'),
  );
  write('tools/README.md', '# Tools\n');

  const problemsOf = (links: string[]) => {
    write('README.md', ['# Top', ...links.map((link) => `- [x](${link})`)].join('\n') + '\n');
    return brokenLinks(root, 'README.md');
  };

  it("accepts links to existing pages, folders and headings, slugged as GitHub does (punctuation dropped, repeats numbered, code's text kept)", () => {
    expect(
      problemsOf([
        'docs/guide.md',
        './docs/guide.md#limits-of-the-deployed-list',
        'docs/guide.md#what-the-account-needs-npm-run-preflight',
        'docs/guide.md#notes-1',
        'docs/guide.md#custom',
        'tools/',
        'tools#tools',
        '#top',
        'https://example.com/no-such-page',
      ]),
    ).toEqual([]);
  });

  it('reports a missing file, a missing heading, a repeat that is not there, a wrong case, a link out of the repository', () => {
    expect(
      problemsOf(['docs/gone.md', 'docs/guide.md#limits', 'docs/guide.md#notes-2', '../outside.md', 'docs/guide.md#Notes', '#bottom']),
    ).toEqual([
      'README.md: docs/gone.md names no file (docs/gone.md)',
      'README.md: docs/guide.md#limits names no heading of docs/guide.md',
      'README.md: docs/guide.md#notes-2 names no heading of docs/guide.md',
      'README.md: ../outside.md leaves the repository',
      'README.md: docs/guide.md#Notes names no heading of docs/guide.md',
      'README.md: #bottom names no heading of README.md',
    ]);
  });

  it('ignores links inside code, and finds links in a page of another folder relative to that folder', () => {
    expect(brokenLinks(root, 'docs/guide.md')).toEqual([]);
    write('docs/other.md', '[up](../README.md) [side](guide.md#notes) [wrong](README.md)\n');
    expect(brokenLinks(root, 'docs/other.md')).toEqual(['docs/other.md: README.md names no file (docs/README.md)']);
  });
});
