/**
 * Each stage's AWS Budget, in a stack of its own (StoreOrders-budget-<stage>) that no stage depends
 * on, deployed into the stage's own account: its amount is that stage's expected monthly cost
 * (docs/reference/costs.md states the figure), its actual and forecast alerts reach the budget stack's
 * topic, and that topic's policy lets AWS Budgets of this account publish, evaluated by the IAM
 * policy simulator.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { budgetStackName } from '../../infra/names.ts';
import { stages } from '../../infra/stage-config.ts';
import { repoRoot, sharedApp, stageNames } from '../lib/cdk.ts';
import {
  type CfnTemplate,
  evaluate,
  evaluationAccount,
  otherAccount,
  type PolicyDocument,
  evaluationRegion,
  referencedId,
  resolveTemplate,
  resourcesOfType,
} from '../lib/iam.ts';

const { app } = sharedApp();
const templateOf = (stackName: string) =>
  app.synth().getStackByName((app.node.findChild(stackName) as Stack).stackName).template as CfnTemplate;

type BudgetProps = {
  Budget: {
    BudgetName: unknown;
    FilterExpression?: unknown;
    BudgetLimit: { Amount: number; Unit: string };
    BudgetType: string;
    TimeUnit: string;
  };
  NotificationsWithSubscribers: {
    Notification: { NotificationType: string; ComparisonOperator: string; Threshold: number; ThresholdType: string };
    Subscribers: { SubscriptionType: string; Address: unknown }[];
  }[];
};

describe.each(stageNames)("the budget of %s's account", (stage) => {
  const config = stages[stage];
  const stackName = budgetStackName(stage);
  const template = templateOf(stackName);
  const budgets = resourcesOfType(template, 'AWS::Budgets::Budget');
  const budget = budgets[0]![1] as unknown as { Properties: BudgetProps; DependsOn?: string[] };
  const topics = resourcesOfType(template, 'AWS::SNS::Topic');

  // Each stage lives in an account of its own: an account holding only this stage budgets its cost
  // alone, not the whole service's (the other stage's cost would delay every alert).
  it("is a monthly cost budget of this stage's expected cost alone", () => {
    expect(budgets).toHaveLength(1);
    const { BudgetLimit, BudgetType, TimeUnit } = budget.Properties.Budget;
    expect({ BudgetType, TimeUnit, Unit: BudgetLimit.Unit }).toEqual({ BudgetType: 'COST', TimeUnit: 'MONTHLY', Unit: 'USD' });
    expect(BudgetLimit.Amount).toBe(config.alarms.monthlyCostUsd);
  });

  // Budget names are unique per account: a second region's stack, or the other stage's in a shared
  // account, would fail on a fixed name, and without the filter two regions would each count both.
  it("is named by its stage and region and counts only its region's spend", () => {
    const resolve = resolveTemplate(template, stackName);
    const resolved = resolve(budget.Properties.Budget) as { BudgetName: string; FilterExpression: unknown };
    expect(resolved.BudgetName).toBe(`store-orders-${stage}-monthly-${evaluationRegion}`);
    expect(resolved.FilterExpression).toEqual({ Dimensions: { Key: 'REGION', Values: [evaluationRegion] } });
  });

  it('states the amount in docs/reference/costs.md', () => {
    const page = readFileSync(join(repoRoot, 'docs/reference/costs.md'), 'utf8');
    expect(page).toContain(`${stackName}\` **$${budget.Properties.Budget.BudgetLimit.Amount} a month**`);
  });

  it("alerts the budget stack's topic when spend passes 80 % and 100 %, and when the forecast passes 100 %", () => {
    expect(topics).toHaveLength(1);
    const topicId = topics[0]![0];
    const alerts = budget.Properties.NotificationsWithSubscribers.map(({ Notification: n, Subscribers }) => {
      expect(Subscribers).toEqual([{ SubscriptionType: 'SNS', Address: { Ref: topicId } }]);
      expect({ op: n.ComparisonOperator, type: n.ThresholdType }).toEqual({ op: 'GREATER_THAN', type: 'PERCENTAGE' });
      return `${n.NotificationType} ${n.Threshold}`;
    });
    expect(alerts.sort()).toEqual(['ACTUAL 100', 'ACTUAL 80', 'FORECASTED 100']);
    // Budgets checks it may publish when the budget is created: the policy must exist first.
    const policyId = resourcesOfType(template, 'AWS::SNS::TopicPolicy')[0]![0];
    expect(budget.DependsOn).toContain(policyId);
  });

  it("lets this account's budgets publish to the topic, and no other account's", async () => {
    const resolve = resolveTemplate(template, stackName);
    const topicId = topics[0]![0];
    const policy = resourcesOfType(template, 'AWS::SNS::TopicPolicy')[0]![1];
    expect(referencedId((policy.Properties?.Topics as unknown[])[0])).toBe(topicId);
    const publish = (account: string) =>
      evaluate({
        principal: 'budgets.amazonaws.com',
        action: 'sns:Publish',
        resource: String(resolve({ Ref: topicId })),
        context: {
          'aws:SourceArn': `arn:aws:budgets::${account}:budget/store-orders-${stage}-monthly-${evaluationRegion}`,
          'aws:SourceAccount': account,
        },
        resourcePolicy: resolve(policy.Properties?.PolicyDocument) as PolicyDocument,
      });
    expect(await publish(evaluationAccount)).toBe('Allowed');
    expect(await publish(otherAccount)).not.toBe('Allowed');
  });
});
