/**
 * The decision records stay records of architecture: at most 40 files in docs/decisions/, at most
 * 12,000 words in all, each named `NNNN-kebab-title.md` with the same fields in the same order
 * (Status, Date, Context, Considered options, Decision, Consequences, The number it rests on,
 * Enforced by), its considered options a list with the chosen one marked, a status that is
 * `accepted` or names the record that replaced it, the date it was taken, and lines a reader reads
 * without scrolling (a URL alone may run past). docs/decisions.md is their index and lists each
 * record exactly once, with its title and status. Small decisions are lines of the pages they
 * govern, not records. Links and backticked paths in the records are checked by links.test.ts and
 * paths.test.ts like every other page.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = resolve(import.meta.dirname, '../..');

export const recordFields = [
  'Status',
  'Date',
  'Context',
  'Considered options',
  'Decision',
  'Consequences',
  'The number it rests on',
  'Enforced by',
];
/** Longest line, not counting the URLs in it (a URL cannot be wrapped). */
const maxLineLength = 100;
/** A record is read in two minutes; a longer one holds two decisions or a history. */
const maxWords = 380;
/** Decisions at the level of architecture: more would be small choices, which belong in the pages they govern. */
export const maxRecords = 40;
export const maxTotalWords = 12_000;
const recordName = /^(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/;

/** The words of a record, as a reader counts them. */
export const wordsOf = (markdown: string): number => markdown.split(/\s+/).filter(Boolean).length;

export type DecisionRecord = {
  readonly number: string;
  readonly title: string;
  readonly status: string;
  readonly date: string;
  readonly words: number;
};

/** What is wrong with a record's fields: their order, and its options. */
const fieldProblems = (name: string, labels: readonly string[], values: ReadonlyMap<string, string>): string[] => {
  const problems: string[] = [];
  if (labels.join('|') !== recordFields.join('|'))
    problems.push(`${name}: fields are ${labels.join(', ') || 'none'}, not ${recordFields.join(', ')} in that order`);
  const options = values.get('Considered options') ?? '';
  const items = options.split(/(?:^| )- /).slice(1);
  if (items.length < 2 || items.filter((item) => item.includes('(chosen)')).length !== 1)
    problems.push(`${name}: Considered options are not a list of two or more options, one of them marked (chosen)`);
  return problems;
};

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
  problems.push(...fieldProblems(name, labels, values));
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
  const words = wordsOf(markdown);
  if (words > maxWords) problems.push(`${name}: ${words} words, more than ${maxWords}`);

  const record =
    title === undefined ? undefined : { number, title, status: successor === null ? status : `superseded by ${successor[1]}`, date, words };
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

/** What breaks the bounds: more than maxRecords records or maxTotalWords words. */
export const boundsProblems = (records: ReadonlyMap<string, DecisionRecord>): string[] => {
  const counted = [...records.values()];
  const words = counted.reduce((sum, record) => sum + record.words, 0);
  return [
    ...(counted.length > maxRecords
      ? [`${counted.length} records, more than ${maxRecords}: fold the small ones into the pages they govern`]
      : []),
    ...(words > maxTotalWords ? [`${words} words in the records, more than ${maxTotalWords}`] : []),
  ];
};

/** Numbers used twice: a number is never reused. */
export const duplicateNumbers = (names: readonly string[]): string[] =>
  names.map((name) => name.slice(0, 4)).filter((number, index, numbers) => numbers.indexOf(number) !== index);

describe('docs/decisions/', () => {
  const folder = join(repoRoot, 'docs/decisions');
  const names = existsSync(folder) ? readdirSync(folder).sort() : [];
  const read = names.map((name) => ({
    name,
    ...readRecord(name, readFileSync(join(folder, name), 'utf8'), new Set(names)),
  }));
  const records = new Map(read.flatMap(({ name, record }) => (record === undefined ? [] : [[name, record] as const])));

  it('holds only records, each number once, with the fields in order, options weighed, a status, a date and short lines', () => {
    expect(read.flatMap(({ problems }) => problems)).toEqual([]);
    expect(duplicateNumbers(names)).toEqual([]);
    expect(names.length).toBeGreaterThan(20);
  });

  it('holds at most 40 records and 12,000 words: decisions at the level of architecture', () => {
    expect(boundsProblems(records)).toEqual([]);
  });

  it('dates a replacement no earlier than the record it replaces', () => {
    for (const [name, record] of [...records].filter(([, record]) => record.status !== 'accepted')) {
      const successor = [...records.values()].find((other) => `superseded by ${other.number}` === record.status)!;
      expect(successor.date >= record.date, `${name} (${record.date}) replaced by ${successor.number} (${successor.date})`).toBe(true);
    }
  });

  it('is indexed by docs/decisions.md, each record exactly once, with its number, title and status', () => {
    expect(records.size).toBe(names.length);
    expect(indexProblems(readFileSync(join(repoRoot, 'docs/decisions.md'), 'utf8'), records)).toEqual([]);
  });
});

describe('the record check itself', () => {
  const names = new Set(['0001-first.md', '0002-second.md']);
  const options = ['', '- the one taken (chosen): why', '- another: why it lost'];
  const record = (replace: Partial<Record<'status' | 'date' | 'extra', string>> = {}, order = recordFields, name = '# 0001. First') =>
    [
      name,
      '',
      ...order.flatMap((field) => [
        `**${field}**: ${field === 'Status' ? (replace.status ?? 'accepted') : field === 'Date' ? (replace.date ?? '2026-11-21') : 'text'}`,
        ...(field === 'Decision' ? ['', '- a list inside a field', '- is part of the field'] : []),
        ...(field === 'Considered options' ? options : []),
        '',
      ]),
      replace.extra ?? '',
    ].join('\n');
  const problems = (text: string, name = '0001-first.md') => readRecord(name, text, names).problems.join('\n');

  it('accepts a record, a superseded one naming its successor, and a long line made long by its URL', () => {
    expect(readRecord('0001-first.md', record(), names).problems).toEqual([]);
    expect(readRecord('0001-first.md', record({ status: 'superseded by\n[0002](0002-second.md)' }), names)).toEqual({
      record: { number: '0001', title: 'First', status: 'superseded by 0002', date: '2026-11-21', words: expect.any(Number) },
      problems: [],
    });
    expect(readRecord('0001-first.md', record({ extra: `see (https://docs.aws.amazon.com/${'x'.repeat(150)}).` }), names).problems).toEqual(
      [],
    );
  });

  it('reports a field missing or out of order, a status that names no record, a bad date, a long line, a long record, a bad name', () => {
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
    expect(problems(record({ extra: Array.from({ length: 400 }, () => 'word').join('\n') }))).toMatch(/more than 380/);
    expect(problems(record(), '1-first.md')).toMatch(/not named NNNN/);
    expect(problems(record().replace('# 0001. First', '# First'))).toMatch(/first line is not/);
  });

  it('reports considered options that weigh nothing: missing, one option, or none or two marked chosen', () => {
    const withoutOptions = recordFields.filter((field) => field !== 'Considered options');
    expect(problems(record({}, withoutOptions))).toMatch(/fields are .*, not /);
    const withOptions = (lines: string[]) => record().replace(options.join('\n'), ['', ...lines].join('\n'));
    expect(problems(withOptions(['- the one taken (chosen): why']))).toMatch(/not a list of two or more options/);
    expect(problems(withOptions(['- one: why', '- another: why']))).toMatch(/one of them marked \(chosen\)/);
    expect(problems(withOptions(['- one (chosen)', '- another (chosen)']))).toMatch(/one of them marked \(chosen\)/);
  });

  it('reports more than 40 records or 12,000 words, and a number used twice', () => {
    const many = (count: number, words: number, first = 1) =>
      new Map(
        Array.from({ length: count }, (_, index) => {
          const number = String(first + index).padStart(4, '0');
          return [`${number}-x.md`, { number, title: 'x', status: 'accepted', date: '2026-11-21', words }] as const;
        }),
      );
    expect(boundsProblems(many(40, 300))).toEqual([]);
    expect(boundsProblems(many(41, 10))).toEqual(['41 records, more than 40: fold the small ones into the pages they govern']);
    expect(boundsProblems(many(30, 401))).toEqual(['12030 words in the records, more than 12000']);
    expect(boundsProblems(new Map([...many(38, 300), ...many(3, 10, 901)]))).toEqual([
      '41 records, more than 40: fold the small ones into the pages they govern',
    ]);
    expect(duplicateNumbers(['0001-a.md', '0001-b.md', '0002-c.md'])).toEqual(['0001']);
  });

  it('reports a record the index lacks or lists twice, and an index line whose status is not the record', () => {
    const records = new Map([
      ['0001-first.md', { number: '0001', title: 'First', status: 'superseded by 0002', date: '2026-11-21', words: 100 }],
      ['0002-second.md', { number: '0002', title: 'Second', status: 'accepted', date: '2026-11-22', words: 100 }],
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
