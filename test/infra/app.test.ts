import { Stack, Token } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../infra/cdk/app.ts';
import { stages } from '../../infra/stage-config.ts';
import { StoreOrdersStack } from '../../infra/cdk/store-orders-stack.ts';
import { cdkJsonContext, stageNames, sharedApp, tempDir } from '../lib/cdk.ts';

describe('the CDK app', () => {
  // One app for the tests below; synthesized once (each Template.fromStack would synthesize the whole app again).
  const { app } = sharedApp();

  it('has one stack per stage, named StoreOrders-<stage>', () => {
    const stacks = app.node.children.filter((child) => child instanceof StoreOrdersStack);
    expect(stacks.map((stack) => stack.stackName).sort()).toEqual(['StoreOrders-production', 'StoreOrders-staging']);
    expect(stageNames.map((stage) => stages[stage].stackName).sort()).toEqual(['StoreOrders-production', 'StoreOrders-staging']);
  });

  it('gives the account-wide API Gateway settings exactly one owner, StoreOrders-account, which both stages depend on, and the budget a stack no stage depends on', () => {
    const assembly = app.synth();
    const templateOf = (stack: Stack) => Template.fromJSON(assembly.getStackByName(stack.stackName).template);
    const account = app.node.findChild('StoreOrders-account') as Stack;
    expect(templateOf(account).toJSON().Resources).toMatchObject({
      ApiGatewayAccount: { Type: 'AWS::ApiGateway::Account', DeletionPolicy: 'Retain' },
    });
    templateOf(account).hasResource('AWS::IAM::Role', { DeletionPolicy: 'Retain' });
    const stacks = app.node.children.filter((child) => child instanceof Stack);
    expect(stacks.map((stack) => stack.stackName).sort()).toEqual([
      'StoreOrders-account',
      'StoreOrders-budget-production',
      'StoreOrders-budget-staging',
      'StoreOrders-production',
      'StoreOrders-staging',
    ]);
    // An organisation may refuse AWS Budgets to a member account: each stage's budget is in a stack of its own.
    const budgetOwners = stacks.filter((stack) => Object.keys(templateOf(stack).findResources('AWS::Budgets::Budget')).length > 0);
    expect(budgetOwners.map((stack) => stack.stackName).sort()).toEqual(['StoreOrders-budget-production', 'StoreOrders-budget-staging']);
    const owners = stacks.filter((stack) => Object.keys(templateOf(stack).findResources('AWS::ApiGateway::Account')).length > 0);
    expect(owners.map((stack) => stack.stackName)).toEqual(['StoreOrders-account']);
    for (const stage of stageNames) {
      const stack = app.node.findChild(stages[stage].stackName) as StoreOrdersStack;
      expect(stack.dependencies.map((dependency) => dependency.stackName)).toEqual(['StoreOrders-account']);
    }
  });

  // `cdk synth` through the real CLI, the region from AWS_REGION or from a profile: test/infra/synth-cli.test.ts.
  it('is environment-agnostic whatever CDK_DEFAULT_ACCOUNT and CDK_DEFAULT_REGION the CLI sets', () => {
    const saved = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
    process.env.CDK_DEFAULT_ACCOUNT = '123456789012';
    process.env.CDK_DEFAULT_REGION = 'us-east-1';
    try {
      const app = createApp(
        { outdir: tempDir('store-orders-env-'), context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } },
        undefined,
        {
          controlTower: false,
        },
      );
      for (const stack of app.node.children.filter((child) => child instanceof Stack)) {
        expect(Token.isUnresolved(stack.account), stack.stackName).toBe(true);
        expect(Token.isUnresolved(stack.region), stack.stackName).toBe(true);
      }
    } finally {
      for (const [name, value] of [
        ['CDK_DEFAULT_ACCOUNT', saved.account],
        ['CDK_DEFAULT_REGION', saved.region],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('keeps every stage difference in the typed stage configuration', () => {
    const { staging, production } = stages;
    // Production's tables are deletion-protected; no stage has a setting that lets CloudFormation delete data (test/infra/tables.test.ts).
    expect(production.data).toEqual({ deletionProtection: true });
    expect(production.logRetentionDays).toBeGreaterThan(staging.logRetentionDays);
    expect(production.throttling.rateLimit).toBeGreaterThan(0);
    expect(staging.throttling.burstLimit).toBeGreaterThanOrEqual(staging.throttling.rateLimit);
  });
});
