/**
 * Records a release's tables for test/infra/rollback.test.ts, which checks that going back to it
 * keeps every table and index the current code has. Run it when production takes a release (the
 * way back is then the release before), on a checkout of that release:
 *
 *   git worktree add --detach /tmp/release <commit> && ln -s "$PWD/node_modules" /tmp/release/node_modules
 *   npx node test/lib/record-release.ts --root /tmp/release --commit <commit> > test/infra/previous-release.json
 *   git worktree remove /tmp/release
 *
 * The release's own stack code builds each stage twice, with the status index switch off and on,
 * so the test can take the release "with the current switches": the switch is stage configuration,
 * which going back to older code (by reverting the change that brought it) leaves as it is.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type * as cdk from 'aws-cdk-lib';

type Resource = { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string; UpdateReplacePolicy?: string };
type StageConfigLike = { stage: string; stackName: string; ordersStatusIndex: boolean; statusFilterChecks?: boolean };

const { values } = parseArgs({ options: { root: { type: 'string' }, commit: { type: 'string' } } });
if (values.root === undefined || values.commit === undefined) {
  console.error('Usage: npx node test/lib/record-release.ts --root <checkout of the release> --commit <its commit>');
  process.exit(2);
}
const root = resolve(values.root);
const { App } = createRequire(join(root, 'package.json'))('aws-cdk-lib') as typeof cdk;
const { stages } = (await import(pathToFileURL(join(root, 'infra/stage-config.ts')).href)) as { stages: Record<string, StageConfigLike> };
const { StoreOrdersStack } = (await import(pathToFileURL(join(root, 'infra/cdk/store-orders-stack.ts')).href)) as {
  StoreOrdersStack: new (scope: unknown, id: string, props: { config: StageConfigLike }) => object;
};
const context = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')).context;

/** The DynamoDB tables of one stage's template, built by the release's own stack code. */
const tablesOf = (config: StageConfigLike): Record<string, Resource> => {
  const app = new App({ context: { ...context, 'aws:cdk:bundling-stacks': [] } });
  new StoreOrdersStack(app, config.stackName, { config });
  const resources = app.synth().getStackByName(config.stackName).template.Resources as Record<string, Resource>;
  return Object.fromEntries(Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::DynamoDB::Table'));
};

const record = {
  release: values.commit,
  note: 'The DynamoDB tables of each stage at this release, built by its own code with the status index switch off and on (test/lib/record-release.ts); test/infra/rollback.test.ts checks that going back to it removes and replaces nothing.',
  stages: Object.fromEntries(
    Object.values(stages).map((config) => [
      config.stage,
      {
        released: { ordersStatusIndex: config.ordersStatusIndex },
        ...Object.fromEntries(
          [false, true].map((ordersStatusIndex) => [
            `ordersStatusIndex=${ordersStatusIndex}`,
            tablesOf({ ...config, ordersStatusIndex, statusFilterChecks: false }),
          ]),
        ),
      },
    ]),
  ),
};
console.log(JSON.stringify(record, null, 2));
