import { Aws } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';

/** Which AWS service may publish to a topic, under which statement id, for which of its resources. */
export type TopicPublisher = { readonly sid: string; readonly service: string; readonly sourceArn: string };

/**
 * A topic that notifies people (the stage's paging and ticket topics, a stage's budget topic), with
 * the e-mail subscription when the stage names one. Its topic policy lets one AWS service publish,
 * for resources of this account only: `enforceSSL` writes a policy holding only its Deny, which
 * replaces SNS's default one, so without this Allow nothing the topic is for reaches anyone.
 */
export function addPeopleTopic(
  scope: Construct,
  id: string,
  { displayName, email, publisher }: { displayName: string; email: string | undefined; publisher: TopicPublisher },
): sns.Topic {
  const topic = new sns.Topic(scope, id, { displayName, enforceSSL: true });
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: publisher.sid,
      principals: [new iam.ServicePrincipal(publisher.service)],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID }, ArnLike: { 'aws:SourceArn': publisher.sourceArn } },
    }),
  );
  if (email !== undefined) topic.addSubscription(new subscriptions.EmailSubscription(email));
  return topic;
}
