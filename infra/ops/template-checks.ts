/**
 * The preflight checks (./deploy-preflight.ts) that compare the templates a deploy sends with what
 * the account holds: the stage's fixed-name tables (./table-checks.ts) and every topic that
 * notifies people (./topic-checks.ts).
 */
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SNSClient } from '@aws-sdk/client-sns';
import { type StageConfig, stages } from '../stage-config.ts';
import { budgetStackName } from '../names.ts';
import type { CheckResult } from './check-results.ts';
import { deployedResources, deployTemplates, recordedTemplate, stacksOfStage } from './stage-templates.ts';
import { checkTables } from './table-checks.ts';
import { checkPeopleTopics } from './topic-checks.ts';

/** Every address a stage config subscribes (alarms.email, alarms.ticketEmail): one left pending fails its topic's check. */
const subscribedEmails = (config: StageConfig): Set<string> =>
  new Set(
    [config, ...Object.values(stages)]
      .flatMap(({ alarms }) => [alarms.email, alarms.ticketEmail])
      .filter((email): email is string => email !== undefined),
  );

/**
 * The checks that compare the templates this deploy sends (`app`, a cloud assembly directory, or
 * this checkout's) with what the account holds: the stage's fixed-name tables, and every topic
 * that notifies people in the stacks the stage involves.
 */
export const templateChecks = async (
  clients: { readonly cloudFormation: CloudFormationClient; readonly dynamoDb: DynamoDBClient; readonly sns: SNSClient },
  config: StageConfig,
  { app, firstDeploy = false }: { readonly app?: string; readonly firstDeploy?: boolean },
): Promise<{ tables: CheckResult[]; topics: CheckResult[] }> => {
  const templates = await deployTemplates(app, firstDeploy ? { firstDeploy: 'true' } : {});
  const stacks = await Promise.all(
    stacksOfStage(config).map(async (stackName) => ({
      stackName,
      template: templates.get(stackName) ?? {},
      deployed: await deployedResources(clients.cloudFormation, stackName),
      ...(stackName === budgetStackName(config.stage)
        ? {
            optional: `deploy it with npx cdk deploy ${stackName}; an organisation may refuse AWS Budgets to this account, and no stage depends on it`,
          }
        : {}),
    })),
  );
  const stage = stacks[0]!;
  if (Object.keys(stage.template.Resources ?? {}).length === 0)
    throw new Error(`no template of ${config.stackName} in ${app ?? 'this checkout'}`);
  // The stack's last template, where it holds a table: what its deploy will change.
  const recorded = (stage.deployed?.size ?? 0) > 0 ? await recordedTemplate(clients.cloudFormation, config.stackName) : undefined;
  return {
    tables: await checkTables(clients.dynamoDb, config, stage.template, stage.deployed, recorded),
    topics: await checkPeopleTopics(clients.sns, subscribedEmails(config), stacks),
  };
};
