/**
 * docs/developing.md's two variable tables name exactly the variables the code reads: `npm start`'s
 * (its `localEnvSchema`, which also refuses bad values) and the functions' (`functionEnvSchema`,
 * from which each function picks its own). A variable added to the code without its row, or a row
 * left for a variable that went, fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localEnvSchema } from '../../infra/local/start.ts';
import { functionEnvSchema } from '../../shared/config.ts';
import { repoRoot } from '../lib/cdk.ts';
import { tableRows } from '../lib/markdown.ts';

const page = readFileSync(join(repoRoot, 'docs/developing.md'), 'utf8');

/** The variables a table's first column names (`A` / `B`, or `A`, `B`, in one cell). */
export const variablesOf = (rows: string[][]): string[] =>
  rows.flatMap(([first]) => [...(first ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map(([, name]) => name!)).sort();

describe('docs/developing.md', () => {
  it('lists every variable npm start reads, and no other', () => {
    expect(variablesOf(tableRows(page, 'variable \\(npm start\\)'))).toEqual(Object.keys(localEnvSchema.shape).sort());
  });

  it('lists every variable the functions read, and no other', () => {
    expect(variablesOf(tableRows(page, 'variable \\(functions\\)'))).toEqual(Object.keys(functionEnvSchema.shape).sort());
  });
});

describe('the table reader', () => {
  it('takes every variable of a cell', () => {
    expect(
      variablesOf([
        ['`A_B` / `C`', 'x'],
        ['`D`, `E1`', 'y'],
        ['not `lower`', 'z'],
      ]),
    ).toEqual(['A_B', 'C', 'D', 'E1']);
  });
});
