/**
 * The preflight's alarm delivery checks (./deploy-preflight.ts): every SNS topic of the stacks the
 * stage's deploy involves (the stage's, the account stack, the account's budget stack), found in
 * their templates rather than listed here, must have a confirmed subscription once deployed: an
 * alarm or budget alert published to a topic nobody confirmed reaches no one. The budget stack's
 * topic only warns: no stage depends on that stack, so it blocks no stage's deploy. A topic tagged
 * `notifies: nobody` (none today) is left out.
 */
import { ListSubscriptionsByTopicCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { CheckResult } from './check-results.ts';
import { type CfnTemplate, type DeployedResource, resourceLabel } from './stage-templates.ts';

const notifiesNobody = (properties: Record<string, unknown> | undefined) =>
  ((properties?.Tags ?? []) as { Key: string; Value: string }[]).some(({ Key, Value }) => Key === 'notifies' && Value === 'nobody');

/** The topics of a template that notify people, by logical id. */
export const peopleTopics = (template: CfnTemplate): { logicalId: string; label: string }[] =>
  Object.entries(template.Resources ?? {})
    .filter(([, resource]) => resource.Type === 'AWS::SNS::Topic' && !notifiesNobody(resource.Properties))
    .map(([logicalId, resource]) => ({ logicalId, label: resourceLabel(logicalId, resource) }));

const topicResult = async (
  sns: SNSClient,
  { check, label, topicArn, emails }: { check: string; label: string; topicArn: string; emails: ReadonlySet<string> },
): Promise<CheckResult> => {
  const { Subscriptions = [] } = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }));
  const confirmed = Subscriptions.filter((subscription) => subscription.SubscriptionArn?.startsWith('arn:'));
  const pending = Subscriptions.filter(
    (subscription) => subscription.SubscriptionArn === 'PendingConfirmation' && emails.has(subscription.Endpoint ?? ''),
  ).map(({ Endpoint }) => Endpoint);
  if (pending.length > 0)
    return {
      check,
      ok: false,
      message: `${pending.join(', ')} has not confirmed its subscription to ${topicArn} (${label}): what it publishes reaches no one there`,
      fix: `open the "AWS Notification - Subscription Confirmation" e-mail and confirm (or re-subscribe: aws sns subscribe --topic-arn ${topicArn} --protocol email --notification-endpoint ${pending[0]})`,
    };
  if (confirmed.length === 0)
    return {
      check,
      ok: false,
      message: `no confirmed subscription to ${topicArn} (${label}): nothing it publishes reaches a person`,
      fix: `aws sns subscribe --topic-arn ${topicArn} --protocol email --notification-endpoint <on-call address>  (then confirm the e-mail), or set alarms.email in infra/stage-config.ts`,
    };
  return {
    check,
    ok: true,
    message: `${label}: ${confirmed.length} confirmed subscription(s): ${confirmed.map((s) => `${s.Protocol} ${s.Endpoint}`).join(', ')}`,
  };
};

/**
 * One result per topic that notifies people, in each stack of `stacks` (name → the template this
 * deploy sends, and the stack as CloudFormation holds it, undefined before its first deploy).
 * `emails` are the addresses the stage configs subscribe (alarms.email): one still pending fails
 * its topic's check even beside other subscribers.
 */
export const checkPeopleTopics = async (
  sns: SNSClient,
  emails: ReadonlySet<string>,
  stacks: readonly {
    readonly stackName: string;
    readonly template: CfnTemplate;
    readonly deployed: ReadonlyMap<string, DeployedResource> | undefined;
    /**
     * A stack no stage depends on (the budget stack, which an organisation may refuse): what to say
     * of it when it does not exist; its topics without a confirmed subscription warn, and block nothing.
     */
    readonly optional?: string;
  }[],
): Promise<CheckResult[]> => {
  const results: CheckResult[] = [];
  for (const { stackName, template, deployed, optional } of stacks) {
    for (const { logicalId, label } of peopleTopics(template)) {
      const check = `alarm delivery: ${label}`;
      const topicArn = deployed?.get(logicalId)?.physicalId;
      if (topicArn === undefined) {
        results.push({
          check,
          ok: true,
          message: `${label} is not deployed yet${deployed === undefined ? ` (${stackName} does not exist${optional ? `: ${optional}` : ''})` : ''}: after the deploy that creates it, subscribe on-call to it (docs/reference/alarms.md#what-each-alarm-needs-to-page-someone) and run the preflight again`,
        });
        continue;
      }
      const result = await topicResult(sns, { check, label, topicArn, emails });
      results.push(
        optional && !result.ok
          ? { ...result, ok: true, warn: true, message: `${result.message} (no stage depends on ${stackName})` }
          : result,
      );
    }
  }
  return results;
};
