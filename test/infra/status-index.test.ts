import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { StoreOrdersStack } from '../../infra/cdk/store-orders-stack.ts';
import { ordersTableKey } from '../../infra/local/local-tables.ts';
import { stages } from '../../infra/stage-config.ts';
import { cdkJsonContext, stageNames } from '../lib/cdk.ts';

// CloudFormation's AWS::DynamoDB::Table reference: while an index is added, update nothing else;
// a rollback during the backfill leaves the index to be deleted by hand (docs/decisions.md#v2-list-access-paths).
// So switching ordersStatusIndex must change the orders table's index and nothing else.
type Resource = { Type: string; Properties?: Record<string, unknown> };

const templateWith = (stage: (typeof stageNames)[number], ordersStatusIndex: boolean) => {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const config = { ...stages[stage], ordersStatusIndex };
  return Template.fromStack(new StoreOrdersStack(app, config.stackName, { config })).toJSON() as {
    Resources: Record<string, Resource>;
    Outputs: unknown;
  };
};

describe.each(stageNames)('the %s stack, with and without the status index', (stage) => {
  const without = templateWith(stage, false);
  const withIndex = templateWith(stage, true);
  const ordersTableId = Object.entries(withIndex.Resources).find(
    ([, resource]) => resource.Type === 'AWS::DynamoDB::Table' && resource.Properties?.TableName === stages[stage].ordersTableName,
  )![0];

  it('differ in the orders table alone', () => {
    expect(Object.keys(withIndex.Resources).sort()).toEqual(Object.keys(without.Resources).sort());
    const changed = Object.keys(withIndex.Resources).filter(
      (id) => JSON.stringify(withIndex.Resources[id]) !== JSON.stringify(without.Resources[id]),
    );
    expect(changed).toEqual([ordersTableId]);
    expect(withIndex.Outputs).toEqual(without.Outputs);
  });

  it('differ in the orders table by the index and its key attribute only', () => {
    const { Properties: withProperties, ...withRest } = withIndex.Resources[ordersTableId]!;
    const { Properties: withoutProperties, ...withoutRest } = without.Resources[ordersTableId]!;
    expect(withRest).toEqual(withoutRest);
    const { GlobalSecondaryIndexes, AttributeDefinitions, ...rest } = withProperties!;
    const { AttributeDefinitions: before, ...restBefore } = withoutProperties!;
    expect(rest).toEqual(restBefore);
    expect(before).toEqual([{ AttributeName: 'id', AttributeType: 'N' }]);
    expect(AttributeDefinitions).toEqual(ordersTableKey.AttributeDefinitions);
    // One index, as the local tables have it: CloudFormation adds one index per update.
    expect(GlobalSecondaryIndexes).toEqual(ordersTableKey.GlobalSecondaryIndexes);
  });

  it('keep the v2 function allowed to Query the index in both states, so the index step changes no role', () => {
    const queryStatements = (resources: Record<string, Resource>) =>
      Object.values(resources)
        .filter((resource) => resource.Type === 'AWS::IAM::Policy')
        .flatMap((policy) => (policy.Properties!.PolicyDocument as { Statement: { Action: unknown }[] }).Statement)
        .filter((statement) => JSON.stringify(statement.Action) === '"dynamodb:Query"');
    expect(queryStatements(without.Resources)).toHaveLength(1);
    expect(queryStatements(without.Resources)).toEqual(queryStatements(withIndex.Resources));
  });
});
