/**
 * Who hears the stage's alarms, for the deploy preflight (./deploy-preflight.ts): the paging topic
 * (`AlarmTopicArn`: pages and the deploy guards) and the ticket topic (`TicketTopicArn`: slow
 * burns, capacity and refused keys, for the next working day) each need a confirmed subscription,
 * or what they say reaches no one.
 */
import type { Stack } from '@aws-sdk/client-cloudformation';
import { ListSubscriptionsByTopicCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { StageConfig } from '../stage-config.ts';

/** One check's result, as the preflight reports it (kept here, the leaf, so the two modules import no loop). */
export type CheckResult = { readonly check: string; readonly ok: boolean; readonly message: string; readonly fix?: string };

/** The stage's two topics: the stack output naming each, the address the stage config subscribes, what reaches it. */
export const alarmTopics = (config: StageConfig) =>
  [
    { check: 'alarm delivery', output: 'AlarmTopicArn', email: config.alarms.email, what: 'page', who: 'on-call', setting: 'alarms.email' },
    {
      check: 'ticket delivery',
      output: 'TicketTopicArn',
      email: config.alarms.ticketEmail,
      what: 'ticket',
      who: "the team's ticket queue",
      setting: 'alarms.ticketEmail',
    },
  ] as const;

type Topic = ReturnType<typeof alarmTopics>[number];

/** One topic's subscriptions: at least one confirmed, and the configured address not left pending. */
export const checkTopicDelivery = async (
  sns: SNSClient,
  stack: Stack | undefined,
  config: StageConfig,
  topic: Topic,
): Promise<CheckResult> => {
  const { check, email } = topic;
  const topicArn = stack?.Outputs?.find((output) => output.OutputKey === topic.output)?.OutputValue;
  if (topicArn === undefined)
    return {
      check,
      ok: true,
      message: `${config.stackName} has no ${topic.output} yet: after this deploy, subscribe ${topic.who} to it${email ? ` (or confirm the e-mail sent to ${email})` : ''} and run the preflight again`,
    };
  const { Subscriptions = [] } = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn }));
  const confirmed = Subscriptions.filter((subscription) => subscription.SubscriptionArn?.startsWith('arn:'));
  const pending = Subscriptions.some(
    (subscription) => subscription.Endpoint === email && subscription.SubscriptionArn === 'PendingConfirmation',
  );
  if (email !== undefined && pending)
    return {
      check,
      ok: false,
      message: `${email} has not confirmed its subscription to ${topicArn}: no ${topic.what} reaches it there`,
      fix: `open the "AWS Notification - Subscription Confirmation" e-mail sent to ${email} and confirm (or re-subscribe: aws sns subscribe --topic-arn ${topicArn} --protocol email --notification-endpoint ${email})`,
    };
  if (confirmed.length === 0)
    return {
      check,
      ok: false,
      message: `no confirmed subscription to ${topicArn}: no ${topic.what} of ${config.stage} reaches a person`,
      fix: `aws sns subscribe --topic-arn ${topicArn} --protocol email --notification-endpoint <address of ${topic.who}>  (then confirm the e-mail), or set ${topic.setting} in infra/stage-config.ts`,
    };
  return {
    check,
    ok: true,
    message: `${confirmed.length} confirmed subscription(s): ${confirmed.map((s) => `${s.Protocol} ${s.Endpoint}`).join(', ')}`,
  };
};
