/**
 * What each Lambda function is: its handler, memory, timeout and environment. The CDK stack
 * deploys exactly this, and the local run (npm start) runs the same handlers with exactly this,
 * so the two cannot drift. Each operation's settings are in its entry of the operations table
 * (infra/operations.ts), the authorizer's beside it. No aws-cdk-lib here: the local run imports this module.
 */
import type { Operation } from '../shared/routes.ts';
import { authorizer, type FunctionSettings, perOperation, type TableNames } from './operations.ts';
import { serviceName } from './names.ts';
import type { FunctionStage } from './stage-config.ts';

export type FunctionName = Operation | 'authorizer';

export const functionSettings: Readonly<Record<FunctionName, FunctionSettings>> = {
  authorizer: authorizer.function,
  ...perOperation((facts) => facts.function),
};

/**
 * The environment a function runs with: what it reads, plus the Powertools settings of the
 * stage. The service name comes from here only (shared/observability.ts passes none), so every
 * log line and metric of a stage carries `service=store-orders-<stage>`, which its alarms read.
 */
export const functionEnvironment = (name: FunctionName, stage: FunctionStage, tables: TableNames): Record<string, string> => ({
  ...functionSettings[name].environment(stage, tables),
  POWERTOOLS_SERVICE_NAME: serviceName(stage.stage),
  POWERTOOLS_LOG_LEVEL: stage.logLevel,
});
