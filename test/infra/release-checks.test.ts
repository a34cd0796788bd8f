import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canaryKeySecretName } from '../../shared/canary-key.ts';
import { metricNames, probeMetricsNamespace } from '../../shared/observability.ts';
import { canaryTimeoutSeconds } from '../../shared/probes.ts';
import { statusFilterCheck } from '../../infra/cdk/release-checks.ts';
import { stages } from '../../infra/stage-config.ts';
import { logicalId, repoRoot, roleActions, stageNames, sharedApp, synthApp } from '../lib/cdk.ts';
import { type CfnTemplate, evaluate, resolveTemplate, roleIdentityPolicies, roleSession } from '../lib/iam.ts';

const { stack, template } = sharedApp();

describe.each(stageNames)('release checks of %s', (stage) => {
  const config = stages[stage];
  const s = stack(stage);
  const t = template(stage);
  // Template JSON, read as CloudFormation would: any shape a test names.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const resources = t.toJSON().Resources as Record<string, { Type: string; Properties: any; DependsOn?: string[]; UpdatePolicy?: any }>;
  const hookId = logicalId(s, s.preTrafficHook.function);
  const functions = [s.authorizerFunction, ...s.routeFunctions.map(({ fn }) => fn)];

  it('checks every alias with the pre-traffic hook, which is updated before the alias moves', () => {
    const aliases = Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::Lambda::Alias');
    expect(aliases).toHaveLength(4);
    for (const [, alias] of aliases) {
      expect(alias.UpdatePolicy?.CodeDeployLambdaAliasUpdate.BeforeAllowTrafficHook).toEqual({ Ref: hookId });
      expect(alias.DependsOn).toContain(hookId);
    }
  });

  it("gives the hook each function's new version, the orders table, the service name and the canary key's secret name, never a key", () => {
    const hook = resources[hookId]!.Properties;
    expect(hook.FunctionName).toMatch(/^CodeDeployHook_/);
    // Its checks stop 30 s before this timeout, so it always reports; a probe's bounded list (256 KB and a page) needs no more memory.
    expect(hook).toMatchObject({ Timeout: 300, MemorySize: 512 });
    const variables = hook.Environment.Variables;
    // One setting maps every function of the registry, by name, to its new version: none is named on its own.
    const parts = variables.VERSION_ARNS['Fn::Join'][1] as unknown[];
    const versionOf = (name: string) =>
      resources[(parts[parts.findIndex((part) => String(part).endsWith(`"${name}":"`)) + 1] as { Ref: string }).Ref];
    for (const fn of functions)
      expect(versionOf(fn.name)).toMatchObject({
        Type: 'AWS::Lambda::Version',
        Properties: { FunctionName: { Ref: logicalId(s, fn.function) } },
      });
    expect(Object.keys(variables).filter((name) => name.endsWith('_VERSION_ARN'))).toEqual([]);
    expect(variables.ORDERS_TABLE).toEqual({ Ref: logicalId(s, s.ordersTable) });
    expect(variables.CANARY_KEY_SECRET).toBe(canaryKeySecretName(stage));
    // ProbeBusy's dimension, as the functions' own metrics carry it.
    expect(variables.SERVICE_NAME).toBe(`store-orders-${stage}`);
    // No key in the template: the prefix is (the authorizer's pattern and API_KEY_PREFIX), never a key of it.
    expect(JSON.stringify(t.toJSON())).not.toMatch(new RegExp(`${config.keyPrefix}[A-Za-z0-9_-]{43}`));
  });

  it("lets the hook read each function's live alias and invoke its published versions by number, never the live alias nor $LATEST, evaluated: no other function, no alias change", async () => {
    const cfn = t.toJSON() as CfnTemplate;
    const resolve = resolveTemplate(cfn, s.stackName);
    const roleId = logicalId(s, s.preTrafficHook.role);
    const principal = roleSession(String(resolve({ 'Fn::GetAtt': [roleId, 'Arn'] })));
    const identityPolicies = roleIdentityPolicies(cfn, roleId, resolve);
    const verdict = (action: string, resource: string) => evaluate({ principal, identityPolicies, action, resource });
    for (const fn of functions) {
      const arn = String(resolve({ 'Fn::GetAtt': [logicalId(s, fn.function), 'Arn'] }));
      // GetAlias's resource is the function (the Service Authorization Reference), the alias named in the request.
      expect(await verdict('lambda:GetAlias', arn), `GetAlias ${arn}`).toBe('Allowed');
      expect(await verdict('lambda:InvokeFunction', `${arn}:6`), `InvokeFunction ${arn}:6`).toBe('Allowed');
      // What clients reach (the alias API Gateway invokes) and the unpublished code: never, whatever the event it would write.
      expect(await verdict('lambda:InvokeFunction', `${arn}:live`), `InvokeFunction ${arn}:live`).toBe('ExplicitlyDenied');
      expect(await verdict('lambda:InvokeFunction', `${arn}:$LATEST`), `InvokeFunction ${arn}:$LATEST`).toBe('ExplicitlyDenied');
      expect(await verdict('lambda:InvokeFunction', arn), `InvokeFunction ${arn}`).not.toBe('Allowed');
      for (const action of ['lambda:UpdateAlias', 'lambda:ListAliases', 'lambda:GetFunction'])
        expect(await verdict(action, arn), `${action} ${arn}`).not.toBe('Allowed');
    }
    const other = String(resolve({ 'Fn::GetAtt': [logicalId(s, s.preTrafficHook.function), 'Arn'] }));
    expect(await verdict('lambda:GetAlias', other)).not.toBe('Allowed');
    expect(await verdict('lambda:GetAlias', other.replace(/function:.*$/, 'function:some-other-function'))).not.toBe('Allowed');
  });

  it('lets the hook invoke any version of the four functions (a grant that does not change with a deploy), describe the orders table, write its own probe orders and ProbeBusy, read the secret, and report to CodeDeploy: nothing else', () => {
    // Which items, attributes and namespace: test/infra/probe-access.test.ts evaluates them.
    expect([...new Set(roleActions(t, logicalId(s, s.preTrafficHook.role)))].sort()).toEqual([
      'cloudwatch:PutMetricData',
      'codedeploy:PutLifecycleEventHookExecutionStatus',
      'dynamodb:DeleteItem',
      'dynamodb:DescribeTable',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'lambda:GetAlias',
      'lambda:InvokeFunction',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'secretsmanager:GetSecretValue',
    ]);
    const policy = Object.values(
      t.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: logicalId(s, s.preTrafficHook.role) }] } }),
    )[0]!;
    const invoke = (policy.Properties.PolicyDocument.Statement as { Action: string; Effect: string; Resource: unknown }[]).find(
      (statement) => statement.Action === 'lambda:InvokeFunction' && statement.Effect === 'Allow',
    )!;
    // Stable across deploys: each function's versions by wildcard, never the version a deploy publishes.
    const expected = functions.map((fn) => ({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalId(s, fn.function), 'Arn'] }, ':*']] }));
    expect(invoke.Resource).toHaveLength(expected.length);
    expect(invoke.Resource).toEqual(expect.arrayContaining(expected));
  });

  it("keeps the canary's artifact bucket when the stack is deleted (a bucket holding objects cannot be deleted by CloudFormation), and the teardown deletes it", () => {
    const buckets = Object.values(resources).filter((resource) => resource.Type === 'AWS::S3::Bucket');
    expect(buckets).toHaveLength(1);
    expect(buckets[0]).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    const teardown = readFileSync(resolve(repoRoot, 'docs/deploying.md'), 'utf8').split('## Tear staging down')[1]!.split('\n## ')[0]!;
    expect(teardown).toMatch(/aws s3 rb "s3:\/\/\$BUCKET" --force/);
    expect(teardown.indexOf('BUCKET=')).toBeLessThan(teardown.indexOf('cdk destroy'));
    expect(teardown).toContain('aws logs delete-log-group');
  });

  it('runs a Synthetics canary every minute against the stage URL, with the secret name only, and the table and service name its probe order and ProbeBusy need', () => {
    const [canary] = Object.values(t.findResources('AWS::Synthetics::Canary'));
    expect(canary!.Properties).toMatchObject({
      Name: `store-orders-${stage}`,
      RuntimeVersion: 'syn-nodejs-4.1',
      Schedule: { Expression: 'rate(1 minute)' },
      StartCanaryAfterCreation: true,
      Code: { Handler: 'canary.handler' },
      RunConfig: {
        TimeoutInSeconds: 55,
        // No filtered page until the stage's status index is ACTIVE (docs/reference/stages.md#the-status-index).
        EnvironmentVariables: {
          CANARY_KEY_SECRET: canaryKeySecretName(stage),
          STATUS_FILTER_CHECK: config.statusFilterChecks ? 'on' : 'off',
          ORDERS_TABLE: { Ref: logicalId(s, s.ordersTable) },
          SERVICE_NAME: `store-orders-${stage}`,
        },
      },
    });
    expect(canary!.Properties.RunConfig.TimeoutInSeconds).toBe(canaryTimeoutSeconds);
    expect(JSON.stringify(canary!.Properties.RunConfig.EnvironmentVariables.BASE_URL)).toContain('/v1');
    expect(roleActions(t, canary!.Properties.ExecutionRoleArn['Fn::GetAtt'][0])).toContain('secretsmanager:GetSecretValue');
  });

  it('pages on two failed canary runs in ten minutes, judged minute by minute', () => {
    const alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm'));
    const named = (id: string) => alarms.find((alarm) => alarm.Properties.AlarmName === `StoreOrders-${stage}-${id}`)!.Properties;
    const topic = { Ref: logicalId(s, s.monitoring.alarmTopic) };
    expect(named('CanaryFailed')).toMatchObject({
      Namespace: 'CloudWatchSynthetics',
      MetricName: 'SuccessPercent',
      Dimensions: [{ Name: 'CanaryName', Value: `store-orders-${stage}` }],
      Period: 60,
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 100,
      // Two failed runs in any ten minutes (docs/reference/alarms.md, "What the guards see").
      EvaluationPeriods: 10,
      DatapointsToAlarm: 2,
      AlarmActions: [topic],
    });
  });

  it('pages apart, and guards no deploy, when the canary cannot set itself up: CanaryFailed means the service answered wrong', () => {
    const alarms = Object.values(t.findResources('AWS::CloudWatch::Alarm'));
    const logicalIdOf = (id: string) =>
      Object.entries(t.findResources('AWS::CloudWatch::Alarm')).find(
        ([, alarm]) => alarm.Properties.AlarmName === `StoreOrders-${stage}-${id}`,
      )![0];
    expect(alarms.find((alarm) => alarm.Properties.AlarmName === `StoreOrders-${stage}-CanarySetupFailed`)!.Properties).toMatchObject({
      Namespace: probeMetricsNamespace,
      MetricName: metricNames.probeSetupFailed,
      Dimensions: [{ Name: 'service', Value: `store-orders-${stage}` }],
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 1,
      EvaluationPeriods: 10,
      DatapointsToAlarm: 2,
      AlarmActions: [{ Ref: logicalId(s, s.monitoring.alarmTopic) }],
    });
    const guarded = Object.values(t.findResources('AWS::CodeDeploy::DeploymentGroup')).map((group) =>
      (group.Properties.AlarmConfiguration.Alarms as { Name: { Ref: string } }[]).map(({ Name }) => Name.Ref),
    );
    expect(guarded).toHaveLength(4);
    for (const alarms of guarded) {
      expect(alarms).toContain(logicalIdOf('CanaryFailed'));
      expect(alarms).not.toContain(logicalIdOf('CanarySetupFailed'));
    }
  });
});

describe('the first deploy of the release checks to a stage', () => {
  it('leaves the hook off every alias only when asked with -c skipPreTrafficHook=true', () => {
    const t = synthApp({ context: { skipPreTrafficHook: 'true' } }).template('production');
    const aliases = Object.values(t.findResources('AWS::Lambda::Alias'));
    expect(aliases).toHaveLength(4);
    for (const alias of aliases) expect(alias.UpdatePolicy.CodeDeployLambdaAliasUpdate.BeforeAllowTrafficHook).toBeUndefined();
  });
});

describe("the canary's filtered-page check", () => {
  it('follows statusFilterChecks, and is refused where the stage has no status index', () => {
    const base = { stage: 'staging', ordersStatusIndex: true } as const;
    expect(statusFilterCheck({ ...base, statusFilterChecks: true })).toBe('on');
    expect(statusFilterCheck({ ...base, statusFilterChecks: false })).toBe('off');
    expect(() => statusFilterCheck({ ...base, ordersStatusIndex: false, statusFilterChecks: true })).toThrow(
      'stage staging: statusFilterChecks needs ordersStatusIndex',
    );
  });
});
