/**
 * The CDK app: one stack per stage, from infra/stage-config.ts. `cdk synth` runs it (cdk.json);
 * the infra tests build the very same app through `createApp`.
 */
import { App, type AppProps, type Environment, Validations } from 'aws-cdk-lib';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { Registry } from '../registry.ts';
import { stages } from '../stage-config.ts';
import { accountStackName, budgetStackName } from '../names.ts';
import { StoreOrdersAccountStack } from './store-orders-account-stack.ts';
import { StoreOrdersBudgetStack } from './store-orders-budget-stack.ts';
import { StoreOrdersStack } from './store-orders-stack.ts';

/**
 * Every stack is environment-agnostic: the account and region are those of the credentials and
 * region `cdk deploy` runs with (the pipeline's per-environment role and AWS_REGION, or an
 * engineer's profile), never those of the machine that synthesized the assembly. The CDK CLI
 * always sets CDK_DEFAULT_REGION, falling back to us-east-1, so taking the region from it would
 * pin a credential-less synth (the pipeline's) to us-east-1. `npm run preflight` shows and checks
 * the target before a deploy (docs/reference/stages.md#where-a-deploy-lands).
 *
 * `controlTower: false` leaves out the Control Tower check (cfn-guard takes ~9 s a synth): the infra
 * tests that do not examine it use that; `cdk synth` and test/infra/control-tower.test.ts run it.
 * `checks: false` leaves out every policy check: the deploy preflight reads the templates only
 * (infra/ops/stage-templates.ts). `registry`: the functions the stage stacks deploy (default: the
 * service's, infra/registry.ts); tests add a throw-away operation or take one away.
 */
export const createApp = (
  props: AppProps = {},
  /** Tests only: an explicit environment. `cdk synth` passes none. */
  env: Environment | undefined = undefined,
  { controlTower = true, checks = true, registry }: { controlTower?: boolean; checks?: boolean; registry?: Registry } = {},
) => {
  const app = new App(props);
  // `cdk deploy -c ignoreDeploymentAlarms=true`: an emergency fix may ship while a guard alarm fires.
  const ignoreDeploymentAlarms = String(app.node.tryGetContext('ignoreDeploymentAlarms')) === 'true';
  // `cdk deploy -c skipPreTrafficHook=true`: the one deploy before a stage has its canary key (docs/reference/alarms.md#what-stops-a-release).
  const skipPreTrafficHook = String(app.node.tryGetContext('skipPreTrafficHook')) === 'true';
  // `cdk deploy -c firstDeploy=true`: a stage's first deploy creates its tables unprotected, so a failed create can remove them (infra/cdk/tables.ts).
  const firstDeploy = String(app.node.tryGetContext('firstDeploy')) === 'true';
  const account = new StoreOrdersAccountStack(app, accountStackName, {
    env,
    description: "Store Orders Service: API Gateway's account-wide logging role (one per account and region)",
    tags: { service: 'store-orders' },
  });
  for (const config of Object.values(stages)) {
    // Spend alerts in a stack of their own that nothing depends on, at the stage's cost (each stage
    // has an account of its own): an organisation that refuses AWS Budgets to the stage's account
    // fails this stack alone (docs/reference/costs.md#the-budget).
    new StoreOrdersBudgetStack(app, budgetStackName(config.stage), {
      config,
      env,
      description: `Store Orders Service, ${config.stage} stage: its account's monthly AWS Budget and its alert topic`,
      tags: { service: 'store-orders', stage: config.stage },
    });
    const stack = new StoreOrdersStack(app, config.stackName, {
      config,
      env,
      ignoreDeploymentAlarms,
      skipPreTrafficHook,
      firstDeploy,
      ...(registry === undefined ? {} : { registry }),
      description: `Store Orders Service, ${config.stage} stage: REST API, functions, tables, alarms`,
      tags: { service: 'store-orders', stage: config.stage },
    });
    // The stage's execution logging needs the account's role in place: `cdk deploy <stage>` deploys it first.
    stack.addStackDependency(account);
  }
  // Every synth is checked: a finding without a written acknowledgement fails it.
  if (checks) Validations.of(app).addPlugins(new AwsSolutionsChecks(app), ...(controlTower ? [new CfnGuardValidator()] : []));
  return app;
};

if (import.meta.main) createApp().synth();
