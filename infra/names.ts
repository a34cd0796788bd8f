/**
 * The names a stage's resources carry in AWS, in one place: the stack gives them, and the key tool,
 * the preflight, the monitoring and the functions' environment find the resources by them. Plain
 * strings and no imports, so anything may import it (the key tool and the preflight without
 * loading aws-cdk-lib). The tables' names are stage configuration instead (infra/stage-config.ts):
 * the orders table is a contract with the store's other systems, written out in full. The
 * secrets the functions read are named in shared/ (canary-key.ts, cursor-keys.ts), which ships.
 */

/** What every name of a stage's resources starts with: `store-orders-<stage>`. */
const stagePrefix = (stage: string): string => `store-orders-${stage}`;

/**
 * The Powertools service name of a stage: the `service` field of every log line and the
 * `service` dimension of every metric, so two stages in one account never mix their counts.
 */
export const serviceName = (stage: string): string => stagePrefix(stage);

/** The REST API. */
export const restApiName = (stage: string): string => stagePrefix(stage);

/** The CodeDeploy application of the stage's function deployments. */
export const deploymentApplicationName = (stage: string): string => stagePrefix(stage);

/** The Synthetics canary, the stage's synthetic client. */
export const canaryName = (stage: string): string => stagePrefix(stage);

/** The pre-traffic hook's function: CodeDeploy's managed policy lets it invoke only functions named `CodeDeployHook_*`. */
export const preTrafficHookFunctionName = (stage: string): string => `CodeDeployHook_${stagePrefix(stage)}-pre-traffic`;

/**
 * The AWS WAF web ACL in front of the stage's API, and the metric name its CloudWatch metrics carry
 * (dimension WebACL); its rules' metric names start with it.
 */
export const webAclName = (stage: string): string => stagePrefix(stage);

/** The usage plan of a tier: the stack names it so, and the key tool finds it by this name (infra/ops/usage-plans.ts). */
export const usagePlanName = (stage: string, tier: string): string => `${stagePrefix(stage)}-${tier}`;

/** The API Gateway API key of one of the stage's keys (the key tool makes it). */
export const apiKeyName = (stage: string, keyId: string): string => `${stagePrefix(stage)}-${keyId}`;

/** The stage's CloudFormation stack, and what its alarms' and dashboard's names start with: `StoreOrders-<stage>`. */
export const stackName = (stage: string): string => `StoreOrders-${stage}`;

/** The account stack (API Gateway's account-wide logging role), one per account and region; both stages depend on it. */
export const accountStackName = stackName('account');

/**
 * A stage's budget stack (the spend alerts of the account and region the stage lives in, at that
 * stage's expected cost); no stage depends on it.
 */
export const budgetStackName = (stage: string): string => stackName(`budget-${stage}`);

/**
 * The AWS Budget of a stage's budget stack in `region`. Budget names are unique per account: the
 * name carries the stage and the region, so budget stacks of both stages or of two regions in one
 * account never meet.
 */
export const budgetName = (stage: string, region: string): string => `${stagePrefix(stage)}-monthly-${region}`;

/** An operation as its constructs, alarms and graphs name it: `listOrders` → `ListOrders`. */
export const pascalCase = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

/** The construct id of an operation's function, `<Operation>Function`: the start of its logical ids. */
export const functionConstructId = (operation: string): string => `${pascalCase(operation)}Function`;
