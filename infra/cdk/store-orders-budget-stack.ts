import { Aws, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import * as budgets from 'aws-cdk-lib/aws-budgets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { budgetName } from '../names.ts';
import { stages } from '../stage-config.ts';

/**
 * The monthly AWS Budget of the budget stack's region, in USD: the sum of the stages' expected
 * monthly cost (`alarms.monthlyCostUsd`, derived in docs/deploying.md#what-it-costs). The stack
 * does not know which stages share its account and region, so the budget is the whole service's:
 * a region holding one stage has its own stage's figure and the other's as headroom.
 */
export const accountBudgetUsd = Object.values(stages).reduce((sum, config) => sum + config.alarms.monthlyCostUsd, 0);

/** Budget alerts: spend passed 80 % and 100 % of the budget, and the month's forecast passed 100 %. */
export const budgetAlerts = [
  { notificationType: 'ACTUAL', threshold: 80 },
  { notificationType: 'ACTUAL', threshold: 100 },
  { notificationType: 'FORECASTED', threshold: 100 },
] as const;

/** The stack's name: one per account and region, whatever stages live there. */

/**
 * The account's spend alerts: a monthly cost budget of the account's spend in this region and the
 * topic its alerts go to. A stack of its own that no stage depends on: an organisation may refuse
 * AWS Budgets to a member account (its payer has not enabled access, or a service control policy
 * denies `budgets:*`), and then this stack fails to deploy while both stages deploy and run
 * (docs/deploying.md#the-budget). Budget names are unique per account and this stack deploys once
 * per account and region: the name carries the region, and the region filter keeps two regions'
 * budgets from each counting the other's spend.
 */
export class StoreOrdersBudgetStack extends Stack {
  /** Where the budget's alerts go (a budget's SNS topic must be in its own account). */
  readonly alarmTopic: sns.Topic;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);
    this.alarmTopic = this.addTopic();
    const budget = new budgets.CfnBudget(this, 'Budget', {
      budget: {
        budgetName: budgetName(Aws.REGION),
        budgetType: 'COST',
        filterExpression: { dimensions: { key: 'REGION', values: [Aws.REGION] } },
        timeUnit: 'MONTHLY',
        budgetLimit: { amount: accountBudgetUsd, unit: 'USD' },
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
      description: "Subscribe on-call here: the account's budget alerts",
      value: this.alarmTopic.topicArn,
    });
  }

  /**
   * The budget's topic. Budgets may publish to it only for budgets of this account (the policy AWS
   * documents in "Creating an Amazon SNS topic for budget notifications"); every stage's alarm
   * e-mail is subscribed.
   */
  private addTopic(): sns.Topic {
    const topic = new sns.Topic(this, 'AlarmTopic', { displayName: 'Store Orders account alarms (AWS Budgets)', enforceSSL: true });
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AccountBudgetsPublish',
        principals: [new iam.ServicePrincipal('budgets.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
          ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:budgets::${Aws.ACCOUNT_ID}:*` },
        },
      }),
    );
    const emails = new Set(Object.values(stages).flatMap((config) => (config.alarms.email === undefined ? [] : [config.alarms.email])));
    for (const email of emails) topic.addSubscription(new subscriptions.EmailSubscription(email));
    return topic;
  }
}
