import { describe, expect, it } from 'vitest';
import { stages } from '../../infra/stage-config.ts';
import { logicalId, stageNames, sharedApp, synthApp } from '../lib/cdk.ts';

const { stack, template } = sharedApp();

/**
 * The alarms each function's deploy watches, rolling back when one fires: its new version's own
 * failures, refused share and (a route with a latency guard) answer time, and the synthetic client.
 */
const guardAlarms: Record<string, string[]> = {
  Authorizer: ['AuthorizerErrors', 'AuthorizerRefusedShare', 'CanaryFailed'],
  ListOrders: ['ListOrdersErrors', 'ListOrdersRefusedShare', 'ListOrdersBusyShare', 'ListFirstByteP99', 'CanaryFailed'],
  CancelOrder: ['CancelOrderErrors', 'CancelOrderRefusedShare', 'CancelOrderBusyShare', 'CancelLatencyP99', 'CanaryFailed'],
  ListOrdersPaged: [
    'ListOrdersPagedErrors',
    'ListOrdersPagedRefusedShare',
    'ListOrdersPagedBusyShare',
    'PagedListLatencyP99',
    'CanaryFailed',
  ],
};

describe.each(stageNames)('delivery to %s', (stage) => {
  const config = stages[stage];
  const s = stack(stage);
  const t = template(stage);
  const functions = [{ name: 'Authorizer', fn: s.authorizerFunction }, ...s.routeFunctions.map(({ name, fn }) => ({ name, fn }))];
  const resources = t.toJSON().Resources;

  it.each(functions.map(({ name }) => name))('publishes %s as a version behind a "live" alias that CodeDeploy moves', (name) => {
    const fn = functions.find((candidate) => candidate.name === name)!.fn;
    const alias = resources[logicalId(s, fn.alias)];
    expect(alias.Properties).toMatchObject({
      Name: 'live',
      FunctionName: { Ref: logicalId(s, fn.function) },
      // A new version whenever the code or configuration changes (CDK names it by their hash).
      FunctionVersion: { 'Fn::GetAtt': [expect.stringMatching(new RegExp(`^${name}FunctionCurrentVersion`)), 'Version'] },
    });
    expect(alias.UpdatePolicy).toEqual({
      CodeDeployLambdaAliasUpdate: {
        ApplicationName: { Ref: expect.stringMatching(/^Deployments/) },
        DeploymentGroupName: { Ref: logicalId(s, fn.deploymentGroup) },
        // The new version is checked before any traffic moves to it (functions/pre-traffic-hook/handler.ts).
        BeforeAllowTrafficHook: { Ref: logicalId(s, s.preTrafficHook.function) },
      },
    });
  });

  it(`shifts traffic with CodeDeployDefault.${config.deployment} and rolls back on failure, stop or alarm`, () => {
    const groups = Object.values(t.findResources('AWS::CodeDeploy::DeploymentGroup'));
    expect(groups).toHaveLength(4);
    for (const group of groups) {
      expect(group.Properties).toMatchObject({
        DeploymentConfigName: `CodeDeployDefault.${config.deployment}`,
        DeploymentStyle: { DeploymentOption: 'WITH_TRAFFIC_CONTROL', DeploymentType: 'BLUE_GREEN' },
        AutoRollbackConfiguration: {
          Enabled: true,
          Events: ['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_REQUEST', 'DEPLOYMENT_STOP_ON_ALARM'],
        },
      });
    }
  });

  it("watches, during each function's shift, the guards of that function's new version and the synthetic client", () => {
    for (const { name, fn } of functions) {
      const group = resources[logicalId(s, fn.deploymentGroup)];
      const { Alarms, Enabled } = group.Properties.AlarmConfiguration;
      expect(Enabled).toBe(true);
      const expected = guardAlarms[name]!.map((id) => logicalId(s, s.monitoring.node.findChild(id) as never)).sort();
      expect(Alarms.map((alarm: { Name: { Ref: string } }) => alarm.Name.Ref).sort(), name).toEqual(expected);
      // CodeDeploy takes at most 10 alarms per deployment group.
      expect(Alarms.length).toBeLessThanOrEqual(10);
      // Updated before the alias, whose update starts the shift: the guards name the version it moves to.
      expect(resources[logicalId(s, fn.alias)].DependsOn).toEqual(expect.arrayContaining(expected));
    }
  });

  it('gives the list and the v2 page a reserved concurrency each, so neither can take the concurrency cancels need', () => {
    const reserved = Object.fromEntries(
      functions.map(({ name, fn }) => [name, resources[logicalId(s, fn.function)].Properties.ReservedConcurrentExecutions]),
    );
    expect(reserved).toEqual({
      Authorizer: undefined,
      ListOrders: config.listReservedConcurrency,
      CancelOrder: undefined,
      ListOrdersPaged: config.pagedListReservedConcurrency,
    });
    expect(config.pagedListReservedConcurrency).toBeGreaterThan(0);
  });
});

describe('the stage configuration', () => {
  it('shifts production gradually and staging all at once', () => {
    expect(stages.production.deployment).toMatch(/^Lambda(Canary|Linear)/);
    expect(stages.staging.deployment).toBe('LambdaAllAtOnce');
  });
});

describe('an emergency deploy', () => {
  it('ignores the guard alarms only when asked with -c ignoreDeploymentAlarms=true', () => {
    const t = synthApp({ context: { ignoreDeploymentAlarms: 'true' } }).template('production');
    for (const group of Object.values(t.findResources('AWS::CodeDeploy::DeploymentGroup'))) {
      expect(group.Properties.AlarmConfiguration.Enabled).toBe(false);
    }
  });
});
