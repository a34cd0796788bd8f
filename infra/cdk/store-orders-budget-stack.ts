import { Aws, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import * as budgets from 'aws-cdk-lib/aws-budgets';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { budgetName } from '../names.ts';
import { addPeopleTopic } from './people-topic.ts';
import type { StageConfig } from '../stage-config.ts';

/** Budget alerts: spend passed 80 % and 100 % of the budget, and the month's forecast passed 100 %. */
export const budgetAlerts = [
  { notificationType: 'ACTUAL', threshold: 80 },
  { notificationType: 'ACTUAL', threshold: 100 },
  { notificationType: 'FORECASTED', threshold: 100 },
] as const;

/**
 * A stage's spend alerts: a monthly cost budget of its account's spend in this region, at the
 * stage's expected monthly cost (`alarms.monthlyCostUsd`, derived in
 * docs/reference/costs.md#what-it-costs), and the topic its alerts go to. Each stage lives in an account
 * of its own, so the account's spend is the stage's. A stack of its own that no stage depends on:
 * an organisation may refuse AWS Budgets to a member account (its payer has not enabled access, or
 * a service control policy denies `budgets:*`), and then this stack fails to deploy while the
 * stage deploys and runs (docs/reference/costs.md#the-budget). The budget's name carries the stage and
 * the region, and the region filter keeps two regions' budgets from each counting the other's spend.
 */
export class StoreOrdersBudgetStack extends Stack {
  /** Where the budget's alerts go (a budget's SNS topic must be in its own account). */
  readonly alarmTopic: sns.Topic;

  constructor(scope: Construct, id: string, props: StackProps & { readonly config: StageConfig }) {
    super(scope, id, props);
    const { config } = props;
    this.alarmTopic = this.addTopic(config);
    const budget = new budgets.CfnBudget(this, 'Budget', {
      budget: {
        budgetName: budgetName(config.stage, Aws.REGION),
        budgetType: 'COST',
        filterExpression: { dimensions: { key: 'REGION', values: [Aws.REGION] } },
        timeUnit: 'MONTHLY',
        budgetLimit: { amount: config.alarms.monthlyCostUsd, unit: 'USD' },
      },
      notificationsWithSubscribers: budgetAlerts.map(({ notificationType, threshold }) => ({
        notification: { notificationType, comparisonOperator: 'GREATER_THAN', threshold, thresholdType: 'PERCENTAGE' },
        subscribers: [{ subscriptionType: 'SNS', address: this.alarmTopic.topicArn }],
      })),
    });
    // Budgets checks that it may publish when the budget is created: the topic policy comes first.
    const policy = this.alarmTopic.node.tryFindChild('Policy');
    if (policy !== undefined) budget.node.addDependency(policy);
    new CfnOutput(this, 'AlarmTopicArn', {
      description: `Subscribe on-call here: the budget alerts of ${config.stage}'s account`,
      value: this.alarmTopic.topicArn,
    });
  }

  /**
   * The budget's topic. Budgets may publish to it only for budgets of this account (the policy AWS
   * documents in "Creating an Amazon SNS topic for budget notifications"); the stage's alarm e-mail
   * is subscribed.
   */
  private addTopic(config: StageConfig): sns.Topic {
    return addPeopleTopic(this, 'AlarmTopic', {
      displayName: `Store Orders ${config.stage} account alarms (AWS Budgets)`,
      email: config.alarms.email,
      publisher: {
        sid: 'AccountBudgetsPublish',
        service: 'budgets.amazonaws.com',
        sourceArn: `arn:${Aws.PARTITION}:budgets::${Aws.ACCOUNT_ID}:*`,
      },
    });
  }
}
