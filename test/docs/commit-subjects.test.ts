/**
 * Commit subjects say what changed in at most 72 characters, the why in the body
 * (docs/developing.md#commits). The hook `.githooks/commit-msg` refuses a long subject as it is
 * written; this file runs the hook, and reads back the subject of every commit made since the hook
 * came into the history (the history before it holds longer subjects, which stay). A shallow clone
 * (CI's) does not hold the commit that added the hook, so there only the hook itself is checked.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = resolve(import.meta.dirname, '../..');
const hook = join(repoRoot, '.githooks/commit-msg');
const maxSubject = 72;

/** The hook's verdict on a message: its exit code and what it printed. */
const runHook = (message: string): { status: number | null; stderr: string } => {
  const file = join(mkdtempSync(join(tmpdir(), 'commit-msg-')), 'COMMIT_EDITMSG');
  writeFileSync(file, message);
  const { status, stderr } = spawnSync(process.execPath, [hook, file], { encoding: 'utf8' });
  return { status, stderr };
};

const git = (...args: string[]): string => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();

/** The commit that added the hook, or none when this checkout does not hold it (a shallow clone, an export). */
const ruleCommit = (): string | undefined => {
  try {
    return git('log', '--format=%H', '--diff-filter=A', '--', '.githooks/commit-msg').split('\n').pop() || undefined;
  } catch {
    return undefined;
  }
};

describe('.githooks/commit-msg', () => {
  it('accepts a subject of 72 characters and a body after a blank line, ignoring git comments and the scissors', () => {
    const subject = 'x'.repeat(maxSubject);
    expect(runHook(`${subject}\n\nWhy it was done.\n`)).toEqual({ status: 0, stderr: '' });
    expect(runHook(`${subject}\n# Please enter the commit message\n# ${'y'.repeat(100)}\n`).status).toBe(0);
    expect(runHook(`${subject}\n\n# ------------------------ >8 ------------------------\n${'z'.repeat(100)}\n`).status).toBe(0);
    // Characters, not bytes: 72 of them may be multi-byte.
    expect(runHook(`${'é'.repeat(maxSubject)}\n`).status).toBe(0);
  });

  it('refuses a subject of 73 characters, and a subject that runs on into a second line', () => {
    const long = runHook(`${'x'.repeat(maxSubject + 1)}\n\nWhy.\n`);
    expect(long.status).toBe(1);
    expect(long.stderr).toContain('the subject has 73 characters, more than 72');
    const runOn = runHook('What changed\nand more of the subject\n');
    expect(runOn.status).toBe(1);
    expect(runOn.stderr).toContain('not followed by a blank line');
  });
});

describe('the history since the hook', () => {
  const since = ruleCommit();

  it.skipIf(since === undefined)('holds no commit subject over 72 characters', () => {
    // The hook's own commit, and every commit descending from it (not the branches that only merged in later).
    const subjects = [
      git('log', '-1', '--format=%h %s', since!),
      ...git('log', '--ancestry-path', '--format=%h %s', `${since}..HEAD`).split('\n'),
    ].filter(Boolean);
    expect(subjects.length).toBeGreaterThan(0);
    expect(subjects.filter((line) => [...line.slice(line.indexOf(' ') + 1)].length > maxSubject)).toEqual([]);
  });
});
