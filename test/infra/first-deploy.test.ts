/**
 * A stage's first deploy that fails is rolled back by CloudFormation, and its retry must not meet
 * what the failed one left. CloudFormation keeps a resource whose DeletionPolicy is Retain after
 * any operation, and deletes one whose DeletionPolicy is RetainExceptOnCreate when the operation
 * that created it rolls back (the DeletionPolicy attribute reference; CDK's
 * RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE); DynamoDB refuses to delete a deletion-protected table
 * whoever asks, a rollback included. So the templates of a first deploy (`-c firstDeploy=true`)
 * keep nothing that has a fixed name and protect nothing a rollback must delete; the next,
 * ordinary deploy differs from it only by turning production's protection on.
 */
import { describe, expect, it } from 'vitest';
import { stages } from '../../infra/stage-config.ts';
import { stageNames, sharedApp, synthApp } from '../lib/cdk.ts';

type Resource = { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string };

const firstDeploy = synthApp({ context: { firstDeploy: 'true' } });
const ordinary = sharedApp();
const resourcesOf = (app: typeof ordinary, stage: (typeof stageNames)[number]) =>
  app.template(stage).toJSON().Resources as Record<string, Resource>;

/** What a rolled-back create leaves on purpose: CloudFormation cannot delete a bucket that holds objects, and the canary writes its first run there at once. It has no fixed name, so a retry makes another. */
const keptOnPurpose = new Set(['AWS::S3::Bucket']);

describe.each(stageNames)('the first deploy of %s', (stage) => {
  const resources = resourcesOf(firstDeploy, stage);

  it('keeps, when it fails, nothing but the synthetic client’s artifact bucket: every table, log group and key is removed with the create', () => {
    const kept = Object.entries(resources).filter(([, resource]) => resource.DeletionPolicy === 'Retain');
    expect(kept.map(([, resource]) => resource.Type)).toEqual([...keptOnPurpose]);
    for (const [, resource] of kept) expect(Object.keys(resource.Properties ?? {}).filter((key) => key.endsWith('Name'))).toEqual([]);
    const tables = Object.values(resources).filter((resource) => typeof resource.Properties?.TableName === 'string');
    expect(tables.map((table) => table.DeletionPolicy)).toEqual(['RetainExceptOnCreate', 'RetainExceptOnCreate']);
  });

  it('protects no table from deletion, so that a rolled-back create can delete what it made', () => {
    const protectedOnes = Object.entries(resources).filter(([, resource]) => resource.Properties?.DeletionProtectionEnabled === true);
    expect(protectedOnes.map(([id]) => id)).toEqual([]);
  });

  it('differs from an ordinary deploy only in the tables’ deletion protection, which the next deploy turns on where the stage has it', () => {
    const later = resourcesOf(ordinary, stage);
    expect(Object.keys(later).sort()).toEqual(Object.keys(resources).sort());
    const changed = Object.keys(later).filter((id) => JSON.stringify(later[id]) !== JSON.stringify(resources[id]));
    const protectedTables = Object.entries(later)
      .filter(([, resource]) => resource.Properties?.DeletionProtectionEnabled === true)
      .map(([id]) => id);
    expect(changed.sort()).toEqual(protectedTables.sort());
    expect(protectedTables).toHaveLength(stages[stage].data.deletionProtection ? 2 : 0);
    for (const id of changed) {
      const { DeletionProtectionEnabled: before, ...restBefore } = resources[id]!.Properties!;
      const { DeletionProtectionEnabled: after, ...restAfter } = later[id]!.Properties!;
      expect({ before, after, same: JSON.stringify(restBefore) === JSON.stringify(restAfter) }).toEqual({
        before: false,
        after: true,
        same: true,
      });
    }
  });
});
