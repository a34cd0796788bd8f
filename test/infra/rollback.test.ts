/**
 * The way back from a release never drops data or an index. The way back is the previous
 * release's code with the stage switches as they are now (a revert on main leaves infra/stage-config.ts
 * as it is): test/infra/previous-release.json holds that release's tables, built by its own code with
 * the status index switch off and on (test/lib/record-release.ts), and the real CDK CLI's `cdk diff`
 * reports what deploying it over the current template does to them. Going back to the release as it
 * was released (its own switches) is what the deploy preflight refuses when it would drop an index
 * the live table has (infra/ops/table-checks.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { declaredShape, removedIndexes } from '../../infra/ops/table-checks.ts';
import { stages } from '../../infra/stage-config.ts';
import { cdkDiff, tableChanges } from '../lib/cdk-diff.ts';
import { repoRoot, stageNames, sharedApp } from '../lib/cdk.ts';

type Resource = { Type: string; Properties?: Record<string, unknown> };
type Tables = Record<string, Resource>;
type Record_ = {
  release: string;
  stages: Record<string, { released: { ordersStatusIndex: boolean } } & Record<string, Tables>>;
};

const previous = JSON.parse(readFileSync(join(repoRoot, 'test/infra/previous-release.json'), 'utf8')) as Record_;
const { app, outdir } = sharedApp();
const assembly = app.synth();
const currentTables = (stage: (typeof stageNames)[number]): Tables =>
  Object.fromEntries(
    Object.entries(assembly.getStackByName(stages[stage].stackName).template.Resources as Tables).filter(
      ([, resource]) => resource.Type === 'AWS::DynamoDB::Table',
    ),
  );

describe.each(stageNames)('going back from this code to the previous release, on %s', (stage) => {
  const config = stages[stage];
  const current = currentTables(stage);
  const back = previous.stages[stage]![`ordersStatusIndex=${config.ordersStatusIndex}`]!;

  it(`removes and replaces no table and no index (cdk diff of release ${previous.release} over the current template)`, () => {
    const changes = tableChanges(cdkDiff(outdir, config.stackName, { Resources: current }, { Resources: back }));
    expect({ removed: changes.removed, replaced: changes.replaced, indexesRemoved: changes.indexesRemoved }, changes.output).toEqual({
      removed: [],
      replaced: [],
      indexesRemoved: [],
    });
    // And the other way, this code's deploy over that release: the same tables, kept.
    const forward = tableChanges(cdkDiff(outdir, config.stackName, { Resources: back }, { Resources: current }));
    expect({ removed: forward.removed, replaced: forward.replaced }, forward.output).toEqual({ removed: [], replaced: [] });
  });

  it('keeps every table this code declares, under the same logical id, with every index', () => {
    for (const [id, table] of Object.entries(current)) {
      expect(back[id]?.Type, id).toBe('AWS::DynamoDB::Table');
      expect(removedIndexes(declaredShape(back[id]!), declaredShape(table))).toEqual([]);
    }
  });
});

describe('the check behind it', () => {
  it('sees a table the way back would drop: cdk diff reports a removed index and a replaced key', () => {
    const current = currentTables('production');
    const [ordersId, orders] = Object.entries(current).find(
      ([, table]) => table.Properties?.TableName === stages.production.ordersTableName,
    )!;
    const [keysId, keys] = Object.entries(current).find(([, table]) => table.Properties?.TableName === stages.production.apiKeysTableName)!;
    const withIndex = previous.stages.production!['ordersStatusIndex=true']![ordersId]!;
    const rekeyed = { ...keys, Properties: { ...keys.Properties, KeySchema: [{ AttributeName: 'key', KeyType: 'HASH' }] } };
    const changes = tableChanges(
      cdkDiff(
        outdir,
        stages.production.stackName,
        { Resources: { [ordersId]: withIndex, [keysId]: keys } },
        { Resources: { [ordersId]: orders, [keysId]: rekeyed } },
      ),
    );
    expect({ indexesRemoved: changes.indexesRemoved, replaced: changes.replaced }).toEqual({
      indexesRemoved: [ordersId],
      replaced: [keysId],
    });
    const dropped = tableChanges(
      cdkDiff(outdir, stages.production.stackName, { Resources: current }, { Resources: { [ordersId]: orders } }),
    );
    expect(dropped.removed.sort()).toEqual(
      Object.keys(current)
        .filter((id) => id !== ordersId)
        .sort(),
    );
  });

  it('is why the preflight refuses redeploying the release as released once the index is on: its template has no index', () => {
    const released = previous.stages.production!;
    const ordersId = Object.keys(released['ordersStatusIndex=true']!).find(
      (id) => released['ordersStatusIndex=true']![id]!.Properties?.TableName === stages.production.ordersTableName,
    )!;
    const asReleased = released[`ordersStatusIndex=${released.released.ordersStatusIndex}`]![ordersId]!;
    const indexOn = declaredShape(released['ordersStatusIndex=true']![ordersId]!);
    // The live table once the index is on has what the template with the switch on declares.
    expect(released.released.ordersStatusIndex).toBe(false);
    expect(
      removedIndexes(declaredShape(asReleased), {
        ...indexOn,
        indexes: new Map([['status-index', { key: 'status (S, HASH)', status: 'ACTIVE' }]]),
      }),
    ).toEqual(['status-index (ACTIVE)']);
  });
});
