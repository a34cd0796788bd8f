/**
 * A few stage settings are restated outside docs/reference/stages.md's stage table (which
 * config-tables.test.ts checks), where a reader acts on them: the key prefix that tells which
 * stage a refused key belongs to (the runbook, docs/api.md), and the log retention the first deploy
 * gives the synthetic client's log group (docs/deploying.md's commands). Each says what
 * infra/stage-config.ts says.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stages } from '../../infra/stage-config.ts';
import { repoRoot, stageNames } from '../lib/cdk.ts';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

/** Every "`so_live_` production" of a text: the prefix and the stage it is said to be. */
export const prefixesNamed = (text: string): { prefix: string; stage: string }[] =>
  [...text.matchAll(/`(so_[a-z]+_)` (production|staging)\b/g)].map(([, prefix, stage]) => ({ prefix: prefix!, stage: stage! }));

/** Every `STAGE=<stage> DAYS=<n>` of a text: the retention given to that stage's log group. */
export const retentionsNamed = (text: string): { stage: string; days: number }[] =>
  [...text.matchAll(/STAGE=(\w+) DAYS=(\d+)/g)].map(([, stage, days]) => ({ stage: stage!, days: Number(days) }));

describe('stage settings restated in the docs', () => {
  it("name each stage's key prefix as the stage config does", () => {
    const named = ['docs/runbook.md', 'docs/api.md'].flatMap((page) => prefixesNamed(read(page)));
    expect(named.length).toBeGreaterThanOrEqual(4);
    expect(named.filter(({ prefix, stage }) => stages[stage as (typeof stageNames)[number]].keyPrefix !== prefix)).toEqual([]);
  });

  it("give the synthetic client's log group each stage's log retention", () => {
    const named = retentionsNamed(read('docs/deploying.md'));
    expect(new Set(named.map(({ stage }) => stage))).toEqual(new Set(stageNames));
    expect(named.filter(({ stage, days }) => stages[stage as (typeof stageNames)[number]].logRetentionDays !== days)).toEqual([]);
  });

  it('are found as written', () => {
    expect(prefixesNamed('(`so_live_` production, `so_test_` staging, `so_local_` local)')).toEqual([
      { prefix: 'so_live_', stage: 'production' },
      { prefix: 'so_test_', stage: 'staging' },
    ]);
    expect(retentionsNamed('STAGE=staging DAYS=14   # production: STAGE=production DAYS=365')).toEqual([
      { stage: 'staging', days: 14 },
      { stage: 'production', days: 365 },
    ]);
  });
});
