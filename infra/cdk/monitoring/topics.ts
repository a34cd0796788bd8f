import { Aws } from 'aws-cdk-lib';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { StageConfig } from '../../stage-config.ts';
import { addPeopleTopic, type TopicPublisher } from '../people-topic.ts';

/**
 * The stage's two topics: `page`, which on-call hears at once (pages and the deploy guards), and
 * `ticket`, which the team reads the next working day (slow burns, capacity, refused keys), in the
 * Site Reliability Workbook's terms (chapter 5, "Alerting on SLOs").
 */
export interface StageTopics {
  readonly page: sns.Topic;
  readonly ticket: sns.Topic;
}

/** Only this stage's alarms (their names start with `prefix`), in this account and region, may publish. */
const stageAlarms = (prefix: string): TopicPublisher => ({
  sid: 'StageAlarmsPublish',
  service: 'cloudwatch.amazonaws.com',
  sourceArn: `arn:${Aws.PARTITION}:cloudwatch:${Aws.REGION}:${Aws.ACCOUNT_ID}:alarm:${prefix}-*`,
});

/** The paging topic (`AlarmTopic`, its id since the first release) and the ticket topic. */
export const addStageTopics = (scope: Construct, config: StageConfig, prefix: string): StageTopics => ({
  page: addPeopleTopic(scope, 'AlarmTopic', {
    displayName: `Store Orders ${config.stage} alarms`,
    email: config.alarms.email,
    publisher: stageAlarms(prefix),
  }),
  ticket: addPeopleTopic(scope, 'TicketTopic', {
    displayName: `Store Orders ${config.stage} tickets`,
    email: config.alarms.ticketEmail,
    publisher: stageAlarms(prefix),
  }),
});
