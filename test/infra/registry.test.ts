/**
 * The plan holds: an operation is one folder and one registry line. A throw-away operation
 * (test/fixtures/throw-away-operation/: a route, a handler, a contract and its runbook page), added
 * to the registry in memory and nowhere else, synthesizes into both stages with its function,
 * route, permissions, alarms (at its contract's thresholds, pointing to its runbook), pre-traffic
 * hook target and OpenAPI path; a contract missing a runbook section or a stage's threshold stops
 * the synth with a message that names it. Taking v2 away (its folder and its line) leaves a house
 * that synthesizes, and nothing outside v2's folder and the registry imports from that folder.
 * test/shipped/registry.test.ts runs the pre-traffic hook bundled from either registry.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OperationContract } from '../../infra/function-contract.ts';
import { buildOpenApiDocument } from '../../infra/openapi/document.ts';
import { knownAnswerFiles, type Registry, registry } from '../../infra/registry.ts';
import { canaryRunner, hookRunner, suiteEntry } from '../../infra/cdk/release-checks.ts';
import type { StageName } from '../../infra/stage-config.ts';
import { throwAwayContract, withoutV2, withThrowAway } from '../fixtures/throw-away-operation/contract.ts';
import { logicalId, methodsByRoute, repoRoot, roleActions, stageNames, synthApp } from '../lib/cdk.ts';

// Template JSON, read as CloudFormation would: any shape a test names.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Resources = Record<string, { Type: string; Properties: any; UpdatePolicy?: any }>;

const withContract = (contract: OperationContract): Registry => ({ ...registry, operations: [...registry.operations, contract] });

describe('a throw-away operation added to the registry alone', () => {
  const app = synthApp({ registry: withThrowAway });

  describe.each(stageNames)('in %s', (stage: StageName) => {
    const s = app.stack(stage);
    const t = app.template(stage);
    const resources = t.toJSON().Resources as Resources;
    const added = s.routeFunctions.find(({ contract }) => contract.name === 'throwAway')!;

    it('gets its function, with the settings and environment its contract states', () => {
      expect(added).toBeDefined();
      expect(resources[logicalId(s, added.fn.function)]!.Properties).toMatchObject({
        Description: 'Store Orders: POST /v1/store/throw-away (throwAway)',
        MemorySize: 256,
        Timeout: 7,
        Environment: { Variables: { ORDERS_TABLE: { Ref: logicalId(s, s.ordersTable) } } },
      });
    });

    it('gets its route, integrated with its live alias within its integration timeout', () => {
      const method = methodsByRoute(t).get('POST /v1/store/throw-away');
      expect(method).toMatchObject({ OperationName: 'throwAway', Integration: { TimeoutInMillis: 12_000 } });
      expect(JSON.stringify(method!.Integration)).toContain(JSON.stringify({ Ref: logicalId(s, added.fn.alias) }));
    });

    it('may do on the orders table exactly what its contract grants', () => {
      expect(roleActions(t, logicalId(s, added.fn.role)).filter((action) => action.startsWith('dynamodb:'))).toEqual(['dynamodb:GetItem']);
    });

    it("gets its alarms, at its contract's thresholds for the stage, each pointing to its own runbook's section", () => {
      const alarms = Object.values(resources)
        .filter((resource) => resource.Type === 'AWS::CloudWatch::Alarm')
        .map((resource) => resource.Properties)
        .filter((alarm) => String(alarm.AlarmName).startsWith(`StoreOrders-${stage}-ThrowAway`));
      expect(alarms.map((alarm) => String(alarm.AlarmName).split('-').at(-1)).sort()).toEqual([
        'ThrowAwayBusyShare',
        'ThrowAwayErrors',
        'ThrowAwayLatencyP99',
        'ThrowAwayRefusedShare',
        'ThrowAwayThrottles',
      ]);
      for (const alarm of alarms)
        expect(alarm.AlarmDescription).toContain(
          `Runbook: test/fixtures/throw-away-operation/runbook.md, section "${String(alarm.AlarmName).split('-').at(-1)}".`,
        );
      const latency = alarms.find((alarm) => String(alarm.AlarmName).endsWith('ThrowAwayLatencyP99'))!;
      expect(latency.Threshold).toBe(throwAwayContract.alarms.latencyP99.thresholdMs[stage]);
      // The guards of its own deployments: its failures, refused share and latency, and the probes.
      expect(s.monitoring.guardsOf.throwAway!.map((alarm) => alarm.node.id).sort()).toEqual(
        ['CanaryFailed', 'ThrowAwayBusyShare', 'ThrowAwayErrors', 'ThrowAwayLatencyP99', 'ThrowAwayRefusedShare'].sort(),
      );
    });

    it("is a target of the pre-traffic hook: its new version in the hook's environment, any version invokable, the hook on its alias", () => {
      const hook = resources[logicalId(s, s.preTrafficHook.function)]!.Properties;
      const versions = hook.Environment.Variables.VERSION_ARNS['Fn::Join'][1] as unknown[];
      const version = resources[(versions[versions.indexOf('","throwAway":"') + 1] as { Ref: string }).Ref]!;
      expect(version).toMatchObject({
        Type: 'AWS::Lambda::Version',
        Properties: { FunctionName: { Ref: logicalId(s, added.fn.function) } },
      });
      const invokable = JSON.stringify(
        Object.values(resources).filter(
          (resource) =>
            resource.Type === 'AWS::IAM::Policy' && JSON.stringify(resource.Properties.Roles).includes(logicalId(s, s.preTrafficHook.role)),
        ),
      );
      expect(invokable).toContain(`"${logicalId(s, added.fn.function)}","Arn"]},":*"`);
      expect(resources[logicalId(s, added.fn.alias)]!.UpdatePolicy.CodeDeployLambdaAliasUpdate.BeforeAllowTrafficHook).toEqual({
        Ref: logicalId(s, s.preTrafficHook.function),
      });
    });
  });

  it("gets its known answers into the hook's and the synthetic client's bundles, and the runners' own code is unchanged", () => {
    const entries = [suiteEntry(hookRunner, knownAnswerFiles(withThrowAway)), suiteEntry(canaryRunner, knownAnswerFiles(withThrowAway))];
    for (const entry of entries)
      expect(entry).toContain(JSON.stringify(join(repoRoot, 'test/fixtures/throw-away-operation/known-answers.ts')));
    // The runners are the same modules whatever the registry: only the generated entry lists the suites.
    expect(entries[0]!.split('\n')[0]).toBe(suiteEntry(hookRunner, knownAnswerFiles(registry)).split('\n')[0]);
  });

  it('gets its path in the published OpenAPI document', () => {
    const document = buildOpenApiDocument(withThrowAway.operations);
    expect(document.paths?.['/v1/store/throw-away']?.post).toMatchObject({ operationId: 'throwAway', 'x-stability': 'experimental' });
  });
});

describe('a contract the house cannot be built from', () => {
  it('stops the synth when one of its alarms has no runbook section, naming the alarm and the page', () => {
    const undocumented = {
      ...throwAwayContract,
      alarms: { latencyP99: { ...throwAwayContract.alarms.latencyP99, alarm: 'ThrowAwaySlowAnswers' } },
    };
    expect(() => synthApp({ registry: withContract(undocumented) })).toThrow(
      'alarm ThrowAwaySlowAnswers: its runbook test/fixtures/throw-away-operation/runbook.md has no section "### ThrowAwaySlowAnswers"',
    );
  });

  it('stops the synth when a threshold has no value for a stage, naming the operation, the alarm and the stage', () => {
    const stagingOnly = {
      ...throwAwayContract,
      alarms: { latencyP99: { ...throwAwayContract.alarms.latencyP99, thresholdMs: { staging: 900 } } },
    } as unknown as OperationContract;
    expect(() => synthApp({ registry: withContract(stagingOnly) })).toThrow(
      "throwAway's ThrowAwayLatencyP99 (alarms.latencyP99.thresholdMs) has no value for stage production",
    );
  });

  it('stops the synth when two operations share a name or a route, or a handler is missing', () => {
    const twice = { ...throwAwayContract, route: { ...throwAwayContract.route, path: '/store/orders', method: 'GET' as const } };
    expect(() => synthApp({ registry: withContract(twice) })).toThrow('two operations serve GET /v1/store/orders');
    const nowhere = { ...throwAwayContract, function: { ...throwAwayContract.function, handlerFile: 'test/fixtures/nowhere/handler.ts' } };
    expect(() => synthApp({ registry: withContract(nowhere) })).toThrow(
      'throwAway: its handler test/fixtures/nowhere/handler.ts does not exist',
    );
    const renamed = { ...throwAwayContract, name: 'cancelOrder' };
    expect(() => synthApp({ registry: withContract(renamed) })).toThrow('two functions are named cancelOrder');
  });
});

describe('v2 taken away: its folder and its registry line', () => {
  const app = synthApp({ registry: withoutV2 });

  it.each(stageNames)('leaves %s a stack without its function, route, secret, alarms and hook target', (stage) => {
    const resources = app.template(stage).toJSON() as { Resources: Resources };
    const text = JSON.stringify(resources);
    const s = app.stack(stage);
    expect(s.routeFunctions.map(({ contract }) => contract.name)).toEqual(['listOrders', 'cancelOrder']);
    expect([...methodsByRoute(app.template(stage)).keys()].sort()).toEqual(['DELETE /v1/store/orders/{orderId}', 'GET /v1/store/orders']);
    expect(s.secrets.size).toBe(0);
    for (const gone of ['ListOrdersPaged', 'listOrdersPaged', 'PagedListLatencyP99', 'cursor-keys']) expect(text).not.toContain(gone);
  });

  it('leaves a published document without /v2', () => {
    expect(Object.keys(buildOpenApiDocument(withoutV2.operations).paths ?? {})).toEqual(['/v1/store/orders', '/v1/store/orders/{orderId}']);
  });

  it('leaves no file outside its folder and the registry importing from its folder (its tests and fixtures aside)', () => {
    const sources = (dir: string): string[] =>
      readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
        const path = `${dir}/${entry.name}`;
        if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sources(path);
        return /\.m?ts$/.test(entry.name) ? [path] : [];
      });
    const importers = ['functions', 'shared', 'infra', 'client']
      .flatMap(sources)
      .filter((file) => !file.startsWith('functions/list-orders-paged/') && file !== 'infra/registry.ts')
      .filter((file) => /from '[./]*\/?(functions\/)?list-orders-paged\//.test(readFileSync(join(repoRoot, file), 'utf8')));
    expect(importers).toEqual([]);
  });
});
