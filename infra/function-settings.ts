/**
 * What each Lambda function is: its handler, memory, timeout and environment, as its contract
 * states it (infra/contract.ts, collected by infra/registry.ts). The CDK stack deploys exactly
 * this, and the local run (npm start) runs the same handlers with exactly this, so the two cannot
 * drift. No aws-cdk-lib here: the local run imports this module.
 */
import type { FunctionSettings, TableNames } from './function-contract.ts';
import { serviceName } from './names.ts';
import { type FunctionName, functionsOf } from './registry.ts';
import type { FunctionStage } from './stage-config.ts';

/** The service's functions' settings by name. */
export const functionSettings = Object.fromEntries(functionsOf().map((contract) => [contract.name, contract.function])) as Readonly<
  Record<FunctionName, FunctionSettings>
>;

/**
 * The environment a function runs with: what it reads, plus the Powertools settings of the
 * stage. The service name comes from here only (shared/observability.ts passes none), so every
 * log line and metric of a stage carries `service=store-orders-<stage>`, which its alarms read.
 */
export const functionEnvironment = (settings: FunctionSettings, stage: FunctionStage, tables: TableNames): Record<string, string> => ({
  ...settings.environment(stage, tables),
  POWERTOOLS_SERVICE_NAME: serviceName(stage.stage),
  POWERTOOLS_LOG_LEVEL: stage.logLevel,
});
