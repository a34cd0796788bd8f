import { Aws, CfnOutput, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as budgets from 'aws-cdk-lib/aws-budgets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { budgetName } from '../names.ts';
import { stages } from '../stage-config.ts';

/**
 * The monthly AWS Budget of the account stack's region, in USD: the sum of the stages' expected
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
export { accountStackName } from '../names.ts';

/**
 * API Gateway's account-wide settings: the role it writes execution logs with. There is one
 * `AWS::ApiGateway::Account` per account and region, so it has one owner here instead of one
 * per stage (two stages would overwrite each other, and two concurrent deploys could fail).
 * Both stage stacks depend on it; both are kept when the stack is deleted, because API
 * Gateway keeps using the role for every API of the account.
 */
export class StoreOrdersAccountStack extends Stack {
  readonly cloudWatchRole: iam.Role;
  /** The account's alarm topic: the budget's alerts (a budget's SNS topic must be in its account). */
  readonly alarmTopic: sns.Topic;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, props);
    this.cloudWatchRole = new iam.Role(this, 'ApiGatewayCloudWatchRole', {
      assumedBy: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      description: 'API Gateway writes execution logs of every REST API in this account and region with this role',
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs')],
    });
    this.cloudWatchRole.applyRemovalPolicy(RemovalPolicy.RETAIN);
    const account = new apigw.CfnAccount(this, 'ApiGatewayAccount', { cloudWatchRoleArn: this.cloudWatchRole.roleArn });
    account.applyRemovalPolicy(RemovalPolicy.RETAIN);
    this.alarmTopic = this.addBudget();

    Validations.of(this.cloudWatchRole).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        'The account-wide API Gateway logging role: the AWS-managed policy is the documented one, and the execution log groups it writes (API-Gateway-Execution-Logs_<apiId>/<stage>) are named by API Gateway at run time.',
    });
  }

  /**
   * A monthly cost budget of the account's spend in this region, whose alerts go to the account's
   * alarm topic. Budget names are unique per account and this stack deploys once per account and
   * region: the name carries the region, and the region filter keeps two regions' budgets from
   * each counting the other's spend.
   * Budgets may publish to it only for budgets of this account (the policy AWS documents in
   * "Creating an Amazon SNS topic for budget notifications"); the budget waits for the policy,
   * since Budgets checks that it may publish when the budget is created.
   */
  private addBudget(): sns.Topic {
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
        subscribers: [{ subscriptionType: 'SNS', address: topic.topicArn }],
      })),
    });
    const policy = topic.node.tryFindChild('Policy');
    if (policy !== undefined) budget.node.addDependency(policy);
    new CfnOutput(this, 'AlarmTopicArn', { description: "Subscribe on-call here: the account's budget alerts", value: topic.topicArn });
    return topic;
  }
}
