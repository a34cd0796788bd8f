/**
 * docs/runbook.md is read by someone who was just paged: each alarm's section answers what is
 * wrong, what to look at first and what to do, points elsewhere for the why, and fits one screen.
 * The alarms are those the production template notifies with, as the generated scenario table of
 * docs/reference/alarms.md lists them (test/shipped/alarm-scenarios.test.ts writes it from the template).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

/** One screen: a terminal or a laptop's browser window shows about this many lines of a page. */
export const screenLines = 30;
/** Characters a rendered line holds before it wraps (the page's own lines are wrapped at 100). */
const lineWidth = 100;

/** The `### <AlarmId>` sections between `## Alarms` and the next `## ` heading: id and text (heading included). */
export const alarmSections = (markdown: string): { id: string; text: string }[] => {
  const start = markdown.indexOf('\n## Alarms\n');
  const end = markdown.indexOf('\n## ', start + 1);
  if (start === -1) throw new Error('no "## Alarms" section');
  return markdown
    .slice(start, end === -1 ? undefined : end)
    .split(/^(?=### )/m)
    .slice(1)
    .map((text) => ({ id: /^### (\S+)/.exec(text)![1]!, text: text.trimEnd() }));
};

/** How many lines a section takes on screen: each line of its Markdown, a long one as the lines it wraps to. */
export const linesOnScreen = (text: string): number =>
  text.split('\n').reduce((lines, line) => lines + Math.max(1, Math.ceil(line.length / lineWidth)), 0);

/** What an alarm section lacks of the answers a paged reader needs. */
export const missingParts = (text: string): string[] => {
  const parts: Record<string, RegExp> = {
    'what is wrong': /^\*\*What is wrong:\*\* \S/m,
    'what to look at first': /^\*\*Look first(?::\*\*|\*\* and \*\*Do:\*\*) \S/m,
    'what to do': /^\*\*Do:\*\*(?: \S|\n)|^\*\*Look first\*\* and \*\*Do:\*\* \S/m,
    // The why is elsewhere: operating.md, a reference page, api.md or a decision record.
    'a link to more, on another page': /^\*\*More:\*\*[^]*?\]\((?!#)[^)\s]+\)/m,
  };
  return Object.entries(parts)
    .filter(([, pattern]) => !pattern.test(text))
    .map(([part]) => part);
};

/** The alarms of the generated scenario table of docs/reference/alarms.md, in its order. */
const notifyingAlarms = (deploying: string): string[] => {
  const table = deploying.split('<!-- alarm-scenarios:begin')[1]!.split('<!-- alarm-scenarios:end -->')[0]!;
  return [...table.matchAll(/^\| `(\w+)` \|/gm)].map(([, id]) => id!);
};

describe('docs/runbook.md', () => {
  const sections = alarmSections(read('docs/runbook.md'));

  it('has one section per alarm that tells someone, as the scenario table lists them from the template', () => {
    const alarms = notifyingAlarms(read('docs/reference/alarms.md'));
    expect(alarms.length).toBeGreaterThan(30);
    expect(sections.map(({ id }) => id).sort()).toEqual([...alarms].sort());
  });

  it(`fits each alarm's section on one screen (${screenLines} lines at most)`, () => {
    const over = sections.filter(({ text }) => linesOnScreen(text) > screenLines).map(({ id, text }) => `${id}: ${linesOnScreen(text)}`);
    expect(over).toEqual([]);
  });

  it('answers in each alarm section what is wrong, what to look at first and what to do, and links to more elsewhere', () => {
    const incomplete = sections.flatMap(({ id, text }) => missingParts(text).map((part) => `${id}: no ${part}`));
    expect(incomplete).toEqual([]);
  });
});

describe('the checks themselves', () => {
  const page = [
    '# Runbook',
    '## Alarms',
    'intro',
    '### Short',
    '',
    '**What is wrong:** a page.',
    '',
    '**Look first** and **Do:** as [Long](#long).',
    '',
    '**More:** [SLOs](operating.md#service-level-objectives).',
    '',
    '### Long',
    '',
    '**What is wrong:** a page.',
    '',
    `**Look first:** ${'x'.repeat(250)}`,
    '',
    '**More:** [Short](#short).',
    '## Procedures',
    '### Not an alarm',
  ].join('\n');

  it('reads the alarm sections alone, counts a long line as the lines it wraps to, and names what a section lacks', () => {
    const sections = alarmSections(page);
    expect(sections.map(({ id }) => id)).toEqual(['Short', 'Long']);
    expect(sections.map(({ text }) => linesOnScreen(text))).toEqual([7, 9]);
    expect(sections.map(({ text }) => missingParts(text))).toEqual([[], ['what to do', 'a link to more, on another page']]);
  });
});
