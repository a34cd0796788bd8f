/**
 * The decision records stay records: one short file per decision in docs/decisions/, named
 * `NNNN-kebab-title.md`, each with the same fields in the same order (Status, Date, Context,
 * Decision, Consequences, The number it rests on, Enforced by), a status that is `accepted` or
 * names the record that replaced it, the date it was taken, and lines a reader reads without
 * scrolling (a URL alone may run past). docs/decisions.md is their index and lists each record
 * exactly once, with its title and status. Links and backticked paths in the records are checked
 * by links.test.ts and paths.test.ts like every other page.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = resolve(import.meta.dirname, '../..');

export const recordFields = ['Status', 'Date', 'Context', 'Decision', 'Consequences', 'The number it rests on', 'Enforced by'];
/** Longest line, not counting the URLs in it (a URL cannot be wrapped). */
const maxLineLength = 100;
/** A record is read in a minute; a longer one holds two decisions or a history. */
const maxWords = 250;
const recordName = /^(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/;
/**
 * Records other branches add while the records are folded into fewer (0901–0959): numbered apart,
 * with a Considered options field after Context, until they are folded in.
 */
export const isInterim = (number: string): boolean => number >= '0901' && number <= '0959';
const interimFields = [...recordFields.slice(0, 3), 'Considered options', ...recordFields.slice(3)];

export type DecisionRecord = { readonly number: string; readonly title: string; readonly status: string; readonly date: string };

/** The record's title, fields and their values, or what keeps it from being a record. */
export const readRecord = (name: string, markdown: string, names: ReadonlySet<string>): { record?: DecisionRecord; problems: string[] } => {
  const number = recordName.exec(name)?.[1];
  if (number === undefined) return { problems: [`${name}: not named NNNN-kebab-title.md`] };
  const problems: string[] = [];
  const lines = markdown.split('\n');
  const title = new RegExp(`^# ${number}\\. (\\S.*)$`).exec(lines[0] ?? '')?.[1];
  if (title === undefined) problems.push(`${name}: the first line is not "# ${number}. <title>"`);
  // A field starts a paragraph with its bold label; the paragraphs after it, up to the next label, are its value.
  const values = new Map<string, string>();
  const labels: string[] = [];
  lines.forEach((line, index) => {
    const label = /^\*\*([^*]+)\*\*: ?/.exec(line);
    if (label === null || (index > 0 && lines[index - 1]!.trim() !== '')) return;
    labels.push(label[1]!);
    const end = lines.findIndex((next, at) => at > index && /^\*\*[^*]+\*\*:/.test(next) && lines[at - 1]!.trim() === '');
    values.set(label[1]!, [line.slice(label[0].length), ...lines.slice(index + 1, end === -1 ? undefined : end)].join(' ').trim());
  });
  const fields = isInterim(number) ? interimFields : recordFields;
  if (labels.join('|') !== fields.join('|'))
    problems.push(`${name}: fields are ${labels.join(', ') || 'none'}, not ${fields.join(', ')} in that order`);
  for (const [label, value] of values) if (value === '') problems.push(`${name}: ${label} is empty`);

  const status = (values.get('Status') ?? '').replace(/\s+/g, ' ');
  const successor = /^superseded by \[(\d{4})\]\(((\d{4})-[^)]+\.md)\)$/.exec(status);
  if (status !== 'accepted' && successor === null)
    problems.push(`${name}: status "${status}" is neither accepted nor superseded by [NNNN](NNNN-….md)`);
  if (successor !== null && (successor[1] !== successor[3] || !names.has(successor[2]!) || successor[2] === name))
    problems.push(`${name}: superseded by ${successor[2]}, which is not another record`);

  const date = values.get('Date') ?? '';
  const day = /^\d{4}-\d{2}-\d{2}$/.test(date) ? new Date(`${date}T00:00:00Z`) : undefined;
  if (day === undefined || Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== date || day.getTime() > Date.now())
    problems.push(`${name}: date "${date}" is not a past day written YYYY-MM-DD`);

  lines.forEach((line, index) => {
    if (line.replace(/https?:\/\/[^\s)>\]]+/g, '').length > maxLineLength)
      problems.push(`${name}:${index + 1}: longer than ${maxLineLength} characters besides its URLs`);
  });
  const words = markdown.split(/\s+/).filter(Boolean).length;
  if (words > maxWords) problems.push(`${name}: ${words} words, more than ${maxWords}`);

  const record =
    title === undefined ? undefined : { number, title, status: successor === null ? status : `superseded by ${successor[1]}`, date };
  return { record, problems };
};

/** What the index gets wrong: a record missing or listed twice, a line that names a record wrongly, a status or title unlike the record's. */
export const indexProblems = (index: string, records: ReadonlyMap<string, DecisionRecord>): string[] => {
  const problems: string[] = [];
  const listed = new Map<string, number>();
  for (const line of index.split('\n').filter((text) => text.startsWith('- ') && text.includes('](decisions/'))) {
    const entry = /^- (\d{4}) \[(.+)\]\(decisions\/([^)]+)\): .+\. \*(accepted|superseded by \d{4})\*$/.exec(line);
    if (entry === null) {
      problems.push(`index line is not "- NNNN [title](decisions/file): summary. *status*": ${line}`);
      continue;
    }
    const [, number, title, file, status] = entry;
    listed.set(file!, (listed.get(file!) ?? 0) + 1);
    const record = records.get(file!);
    if (record === undefined) problems.push(`index lists ${file}, which is not a record`);
    else if (record.number !== number || record.title !== title || record.status !== status)
      problems.push(
        `index line for ${file} says ${number} "${title}" ${status}; the record says ${record.number} "${record.title}" ${record.status}`,
      );
  }
  for (const file of records.keys()) if (listed.get(file) !== 1) problems.push(`index lists ${file} ${listed.get(file) ?? 0} times`);
  return problems;
};

describe('docs/decisions/', () => {
  const folder = join(repoRoot, 'docs/decisions');
  const names = existsSync(folder) ? readdirSync(folder).sort() : [];
  const read = names.map((name) => ({
    name,
    ...readRecord(name, readFileSync(join(folder, name), 'utf8'), new Set(names)),
  }));
  const records = new Map(read.flatMap(({ name, record }) => (record === undefined ? [] : [[name, record] as const])));

  it('holds only records, numbered 0001 on without a gap, each with the fields in order, a status, a date and short lines', () => {
    expect(read.flatMap(({ problems }) => problems)).toEqual([]);
    const numbered = names.filter((name) => !isInterim(name.slice(0, 4)));
    expect(numbered.map((name) => name.slice(0, 4))).toEqual(numbered.map((_, index) => String(index + 1).padStart(4, '0')));
    expect(names.length).toBeGreaterThan(100);
  });

  it('dates a replacement no earlier than the record it replaces', () => {
    const superseded = [...records].filter(([, record]) => record.status !== 'accepted');
    expect(superseded.length).toBeGreaterThan(0);
    for (const [name, record] of superseded) {
      const successor = [...records.values()].find((other) => `superseded by ${other.number}` === record.status)!;
      expect(successor.date >= record.date, `${name} (${record.date}) replaced by ${successor.number} (${successor.date})`).toBe(true);
    }
  });

  it('is indexed by docs/decisions.md, each record exactly once, with its number, title and status', () => {
    expect(records.size).toBeGreaterThan(100);
    expect(indexProblems(readFileSync(join(repoRoot, 'docs/decisions.md'), 'utf8'), records)).toEqual([]);
  });
});

describe('the record check itself', () => {
  const names = new Set(['0001-first.md', '0002-second.md']);
  const record = (replace: Partial<Record<'status' | 'date' | 'extra', string>> = {}, order = recordFields) =>
    [
      '# 0001. First',
      '',
      ...order.flatMap((field) => [
        `**${field}**: ${field === 'Status' ? (replace.status ?? 'accepted') : field === 'Date' ? (replace.date ?? '2026-11-21') : 'text'}`,
        ...(field === 'Decision' ? ['', '- a list inside a field', '- is part of the field'] : []),
        '',
      ]),
      replace.extra ?? '',
    ].join('\n');

  it('accepts a record, a superseded one naming its successor, and a long line made long by its URL', () => {
    expect(readRecord('0001-first.md', record(), names).problems).toEqual([]);
    expect(readRecord('0001-first.md', record({ status: 'superseded by\n[0002](0002-second.md)' }), names)).toEqual({
      record: { number: '0001', title: 'First', status: 'superseded by 0002', date: '2026-11-21' },
      problems: [],
    });
    expect(readRecord('0001-first.md', record({ extra: `see (https://docs.aws.amazon.com/${'x'.repeat(150)}).` }), names).problems).toEqual(
      [],
    );
  });

  it('reports a field missing or out of order, a status that names no record, a bad date, a long line, a long record, a bad name', () => {
    const problems = (text: string, name = '0001-first.md') => readRecord(name, text, names).problems.join('\n');
    expect(
      problems(
        record(
          {},
          recordFields.filter((field) => field !== 'Enforced by'),
        ),
      ),
    ).toMatch(/fields are .*, not /);
    expect(problems(record({}, [...recordFields].reverse()))).toMatch(/fields are .*, not /);
    expect(problems(record({ status: 'superseded by [0003](0003-third.md)' }))).toMatch(/which is not another record/);
    expect(problems(record({ status: 'replaced' }))).toMatch(/neither accepted nor superseded/);
    expect(problems(record({ date: '2026-02-30' }))).toMatch(/is not a past day/);
    expect(problems(record({ date: '2999-01-01' }))).toMatch(/is not a past day/);
    expect(problems(record({ extra: 'word '.repeat(30) }))).toMatch(/longer than 100 characters/);
    expect(problems(record({ extra: Array.from({ length: 300 }, () => 'word').join('\n') }))).toMatch(/more than 250/);
    expect(problems(record(), '1-first.md')).toMatch(/not named NNNN/);
    expect(problems(record().replace('# 0001. First', '# First'))).toMatch(/first line is not/);
  });

  it('reports a record the index lacks or lists twice, and an index line whose status is not the record', () => {
    const records = new Map([
      ['0001-first.md', { number: '0001', title: 'First', status: 'superseded by 0002', date: '2026-11-21' }],
      ['0002-second.md', { number: '0002', title: 'Second', status: 'accepted', date: '2026-11-22' }],
    ]);
    const line = (file: string, title: string, status: string) => `- ${file.slice(0, 4)} [${title}](decisions/${file}): what. *${status}*`;
    expect(
      indexProblems(
        [line('0001-first.md', 'First', 'superseded by 0002'), line('0002-second.md', 'Second', 'accepted')].join('\n'),
        records,
      ),
    ).toEqual([]);
    expect(indexProblems(line('0001-first.md', 'First', 'accepted'), records)).toEqual([
      'index line for 0001-first.md says 0001 "First" accepted; the record says 0001 "First" superseded by 0002',
      'index lists 0002-second.md 0 times',
    ]);
    expect(
      indexProblems(
        [
          line('0001-first.md', 'First', 'superseded by 0002'),
          line('0002-second.md', 'Second', 'accepted'),
          line('0002-second.md', 'Second', 'accepted'),
        ].join('\n'),
        records,
      ),
    ).toEqual(['index lists 0002-second.md 2 times']);
  });
});
