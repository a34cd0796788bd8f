import { Aws } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import type { StageConfig } from '../../stage-config.ts';

/**
 * The stage's two topics: `page`, which on-call hears at once (pages and the deploy guards), and
 * `ticket`, which the team reads the next working day (slow burns, capacity, refused keys), in the
 * Site Reliability Workbook's terms (chapter 5, "Alerting on SLOs").
 */
export interface StageTopics {
  readonly page: sns.Topic;
  readonly ticket: sns.Topic;
}

/**
 * One topic, with the stage's e-mail subscription when the stage names one. A topic policy
 * replaces SNS's default one, and `enforceSSL` writes one holding only its Deny: without the
 * Allow below, CloudWatch may not publish and no alarm reaches anyone. Only this stage's alarms
 * (their names start with the prefix), in this account and region, may publish.
 */
function addTopic(scope: Construct, id: string, displayName: string, prefix: string, email: string | undefined): sns.Topic {
  const topic = new sns.Topic(scope, id, { displayName, enforceSSL: true });
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'StageAlarmsPublish',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
        ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:cloudwatch:${Aws.REGION}:${Aws.ACCOUNT_ID}:alarm:${prefix}-*` },
      },
    }),
  );
  if (email !== undefined) topic.addSubscription(new subscriptions.EmailSubscription(email));
  return topic;
}

/** The paging topic (`AlarmTopic`, its id since the first release) and the ticket topic. */
export const addStageTopics = (scope: Construct, config: StageConfig, prefix: string): StageTopics => ({
  page: addTopic(scope, 'AlarmTopic', `Store Orders ${config.stage} alarms`, prefix, config.alarms.email),
  ticket: addTopic(scope, 'TicketTopic', `Store Orders ${config.stage} tickets`, prefix, config.alarms.ticketEmail),
});
