/**
 * IAM as AWS evaluates it, offline: synthesized policies run through a policy simulator
 * (`@cloud-copilot/iam-simulate`: identity, resource, SCP and RCP policies, every condition
 * operator), never a pattern match on their JSON.
 *
 * The API, for any test that needs a verdict:
 * - `evaluate(call)` → 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied' for one request, given
 *   the caller's identity policies and the resource's policy; a request the simulator finds
 *   malformed (an unknown action, an ARN of the wrong type) throws instead of passing as a denial.
 * - `resolveTemplate(template, stackName)` → a resolver that turns a template's values
 *   (Ref, Fn::GetAtt, Fn::Join, Fn::Sub, …) into the concrete strings AWS would see, in the fixed
 *   `evaluationAccount`/`evaluationRegion`.
 * - `roleIdentityPolicies(template, roleLogicalId, resolve)` → every policy a role of the template
 *   holds (inline, attached `AWS::IAM::Policy`, and AWS managed policies from `awsManagedPolicies`).
 */
import { runSimulation, runUnsafeSimulation, type Simulation } from '@cloud-copilot/iam-simulate';

/** The account and region every template is evaluated in (any values would do: they only must be one). */
export const evaluationAccount = '111111111111';
export const evaluationRegion = 'eu-west-1';
/** Another account, for "a caller from elsewhere is refused" checks. */
export const otherAccount = '222222222222';

export type PolicyDocument = { Version?: string; Statement: Record<string, unknown>[] | Record<string, unknown> };
export type CfnResource = {
  Type: string;
  Properties?: Record<string, unknown>;
  UpdatePolicy?: Record<string, unknown>;
  DependsOn?: unknown;
};
export type CfnTemplate = { Resources: Record<string, CfnResource> };

export type Verdict = 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied';

/** One request as IAM sees it. */
export type Call = {
  /** An ARN (role session, user) or a service principal such as `cloudwatch.amazonaws.com`. */
  readonly principal: string;
  readonly action: string;
  readonly resource: string;
  /** The account that owns the resource (default: `evaluationAccount`). */
  readonly resourceAccount?: string;
  /** Request context: aws:SourceArn, aws:SourceAccount, kms:EncryptionContext:…, … */
  readonly context?: Record<string, string | string[]>;
  /** The caller's identity policies (none for a service principal). */
  readonly identityPolicies?: readonly PolicyDocument[];
  /** The resource's policy: a topic, key or function policy, or a role's trust policy. */
  readonly resourcePolicy?: PolicyDocument;
};

/**
 * Context keys of the `kms:EncryptionContext:<key>` family: the simulator's input validation
 * recognises only `/`-separated variable keys (`aws:PrincipalTag/…`), so it drops these although
 * KMS documents them for the action; for a request whose only dropped keys are these, the same
 * evaluation runs without that validation (`runUnsafeSimulation`, after the validated run has
 * accepted every other input).
 */
const encryptionContextKey = /^kms:EncryptionContext:/i;

/** The simulator's verdict on one request; a request it cannot evaluate is an error, not a denial. */
export const evaluate = async (call: Call): Promise<Verdict> => {
  const simulation: Simulation = {
    request: {
      principal: call.principal,
      action: call.action,
      resource: { resource: call.resource, accountId: call.resourceAccount ?? evaluationAccount },
      // Every request the stack relies on travels over TLS.
      contextVariables: { 'aws:SecureTransport': 'true', ...call.context },
    },
    identityPolicies: (call.identityPolicies ?? []).map((policy, index) => ({ name: `policy${index}`, policy })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    ...(call.resourcePolicy === undefined ? {} : { resourcePolicy: call.resourcePolicy }),
  };
  const result = await runSimulation(simulation, {});
  if (result.resultType === 'error')
    throw new Error(`cannot evaluate ${call.action} on ${call.resource}: ${JSON.stringify(result.errors)}`);
  const ignored = result.resultType === 'single' ? (result.result.ignoredContextKeys ?? []) : [];
  // A context key the action does not have means the call is described wrongly: say so instead of evaluating without it.
  const unknown = ignored.filter((key) => !encryptionContextKey.test(key));
  if (unknown.length > 0) throw new Error(`${call.action} has no context key ${unknown.join(', ')}`);
  if (ignored.length === 0) return result.overallResult as Verdict;
  // The inputs passed validation above. The unsafe entry point loads a bare resource policy without
  // the name it reports with; iam-policy's ValidatedPolicy shape carries one.
  const resourcePolicy = call.resourcePolicy && {
    __validated: true,
    policyDocument: call.resourcePolicy,
    metadata: { name: 'resource' },
    errors: [],
  };
  return runUnsafeSimulation({ ...simulation, resourcePolicy }, {});
};

/**
 * The AWS managed policies the stacks attach, as AWS publishes them (AWS Managed Policy reference,
 * cited in docs/decisions.md). A role attaching one not listed here fails the evaluation: add it.
 */
export const awsManagedPolicies: Record<string, PolicyDocument> = {
  'service-role/AWSCodeDeployRoleForLambdaLimited': {
    Version: '2012-10-17',
    Statement: [
      {
        Action: ['cloudwatch:DescribeAlarms', 'lambda:UpdateAlias', 'lambda:GetAlias', 'lambda:GetProvisionedConcurrencyConfig'],
        Resource: '*',
        Effect: 'Allow',
      },
      { Action: ['s3:GetObject', 's3:GetObjectVersion'], Resource: 'arn:aws:s3:::*/CodeDeploy/*', Effect: 'Allow' },
      {
        Action: ['s3:GetObject', 's3:GetObjectVersion'],
        Resource: '*',
        Condition: { StringEquals: { 's3:ExistingObjectTag/UseWithCodeDeploy': 'true' } },
        Effect: 'Allow',
      },
      { Action: ['lambda:InvokeFunction'], Resource: 'arn:aws:lambda:*:*:function:CodeDeployHook_*', Effect: 'Allow' },
    ],
  },
  'service-role/AmazonAPIGatewayPushToCloudWatchLogs': {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: [
          'logs:CreateLogGroup',
          'logs:CreateLogStream',
          'logs:DescribeLogGroups',
          'logs:DescribeLogStreams',
          'logs:PutLogEvents',
          'logs:GetLogEvents',
          'logs:FilterLogEvents',
        ],
        Resource: '*',
      },
    ],
  },
};

type Resolver = (value: unknown) => unknown;

const arn = (service: string, resource: string, region = evaluationRegion) =>
  `arn:aws:${service}:${region}:${evaluationAccount}:${resource}`;

/** A template being resolved: its stack's name, its resources, and the resolver of its values. */
type Resolving = { readonly stackName: string; readonly resources: Record<string, CfnResource>; readonly resolve: Resolver };

/**
 * Values for a template's intrinsic functions, as CloudFormation would produce them in
 * `evaluationAccount`/`evaluationRegion`. Names the template leaves to CloudFormation are made up
 * from the stack and logical id (unique, as CloudFormation's are). An intrinsic or attribute it
 * does not know throws, so nothing is evaluated against a guess.
 */
export const resolveTemplate = (template: CfnTemplate, stackName: string): Resolver => {
  const resolving: Resolving = {
    stackName,
    resources: template.Resources,
    resolve: (value) => {
      if (Array.isArray(value)) return value.map(resolving.resolve);
      if (value === null || typeof value !== 'object') return value;
      const entries = Object.entries(value as Record<string, unknown>);
      const [name, argument] = entries[0] ?? [];
      if (entries.length === 1 && (name === 'Ref' || name?.startsWith('Fn::'))) return intrinsic(resolving, name!, argument);
      return Object.fromEntries(entries.map(([key, inner]) => [key, resolving.resolve(inner)]));
    },
  };
  return resolving.resolve;
};

const resourceOf = (template: Resolving, logicalId: string): CfnResource => {
  const resource = template.resources[logicalId];
  if (resource === undefined) throw new Error(`${template.stackName}: no resource ${logicalId}`);
  return resource;
};

/** The name a resource is given, or one made up from the stack and its logical id. */
const named = (template: Resolving, logicalId: string, property: string): string => {
  const value = resourceOf(template, logicalId).Properties?.[property];
  return value === undefined ? `${template.stackName}-${logicalId}` : String(template.resolve(value));
};

const pseudoParameters = (stackName: string): Record<string, string> => ({
  'AWS::AccountId': evaluationAccount,
  'AWS::Region': evaluationRegion,
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::StackName': stackName,
});

/** `{ Ref }`: a pseudo parameter, or what CloudFormation answers for a resource of each type. */
const ref = (template: Resolving, logicalId: string): string => {
  const pseudo = pseudoParameters(template.stackName);
  if (logicalId in pseudo) return pseudo[logicalId]!;
  const { Type, Properties = {} } = resourceOf(template, logicalId);
  switch (Type) {
    case 'AWS::DynamoDB::Table':
      return named(template, logicalId, 'TableName');
    case 'AWS::Lambda::Function':
      return named(template, logicalId, 'FunctionName');
    case 'AWS::Lambda::Alias':
      return `${getAtt(template, String((Properties.FunctionName as { Ref: string }).Ref), 'Arn')}:${String(template.resolve(Properties.Name))}`;
    case 'AWS::Lambda::Version':
      return `${getAtt(template, String((Properties.FunctionName as { Ref: string }).Ref), 'Arn')}:1`;
    case 'AWS::SNS::Topic':
      return arn('sns', named(template, logicalId, 'TopicName'));
    case 'AWS::Logs::LogGroup':
      return named(template, logicalId, 'LogGroupName');
    case 'AWS::IAM::Role':
      return named(template, logicalId, 'RoleName');
    case 'AWS::KMS::Key':
      return `key-${logicalId.toLowerCase()}`;
    case 'AWS::ApiGateway::RestApi':
    case 'AWS::ApiGateway::Authorizer':
    case 'AWS::ApiGateway::Resource':
    case 'AWS::ApiGateway::Deployment':
      return logicalId.toLowerCase().slice(0, 10);
    case 'AWS::ApiGateway::Stage':
      return String(template.resolve(Properties.StageName));
    case 'AWS::CodeDeploy::Application':
      return named(template, logicalId, 'ApplicationName');
    case 'AWS::CodeDeploy::DeploymentGroup':
      return named(template, logicalId, 'DeploymentGroupName');
    case 'AWS::CloudWatch::Alarm':
      return named(template, logicalId, 'AlarmName');
    case 'AWS::S3::Bucket':
      return named(template, logicalId, 'BucketName').toLowerCase();
    default:
      throw new Error(`${template.stackName}: no Ref value known for ${Type} (${logicalId})`);
  }
};

/** `{ Fn::GetAtt }` of the attributes the templates use. */
const getAtt = (template: Resolving, logicalId: string, attribute: string): string => {
  const { Type } = resourceOf(template, logicalId);
  const key = `${Type}.${attribute}`;
  switch (key) {
    case 'AWS::DynamoDB::Table.Arn':
      return arn('dynamodb', `table/${ref(template, logicalId)}`);
    case 'AWS::Lambda::Function.Arn':
      return arn('lambda', `function:${ref(template, logicalId)}`);
    case 'AWS::Lambda::Version.Version':
      return '1';
    case 'AWS::IAM::Role.Arn':
      return `arn:aws:iam::${evaluationAccount}:role/${ref(template, logicalId)}`;
    case 'AWS::Logs::LogGroup.Arn':
      return `${arn('logs', `log-group:${ref(template, logicalId)}`)}:*`;
    case 'AWS::KMS::Key.Arn':
      return arn('kms', `key/${ref(template, logicalId)}`);
    case 'AWS::SNS::Topic.TopicArn':
      return ref(template, logicalId);
    case 'AWS::SNS::Topic.TopicName':
      return named(template, logicalId, 'TopicName');
    case 'AWS::CloudWatch::Alarm.Arn':
      return arn('cloudwatch', `alarm:${ref(template, logicalId)}`);
    case 'AWS::ApiGateway::RestApi.RootResourceId':
      return 'root';
    case 'AWS::S3::Bucket.Arn':
      return `arn:aws:s3:::${ref(template, logicalId)}`;
    default:
      throw new Error(`${template.stackName}: no value known for Fn::GetAtt ${key} (${logicalId})`);
  }
};

const sub = (template: Resolving, text: string, variables: Record<string, unknown> = {}): string =>
  text.replaceAll(/\$\{([^}!][^}]*)\}/g, (_, name: string) => {
    if (name in variables) return String(template.resolve(variables[name]));
    const [id, attribute] = name.split('.');
    return attribute === undefined ? ref(template, id!) : getAtt(template, id!, attribute);
  });

/** One intrinsic function, `{ [name]: argument }`. */
const intrinsic = (template: Resolving, name: string, argument: unknown): unknown => {
  const args = argument as unknown[];
  switch (name) {
    case 'Ref':
      return ref(template, String(argument));
    case 'Fn::GetAtt':
      return typeof argument === 'string'
        ? getAtt(template, argument.split('.')[0]!, argument.split('.').slice(1).join('.'))
        : getAtt(template, String(args[0]), String(args[1]));
    case 'Fn::Join':
      return (template.resolve(args[1]) as unknown[]).join(String(args[0]));
    case 'Fn::Select':
      return (template.resolve(args[1]) as unknown[])[Number(template.resolve(args[0]))];
    case 'Fn::Split':
      return String(template.resolve(args[1])).split(String(args[0]));
    case 'Fn::Sub':
      return typeof argument === 'string' ? sub(template, argument) : sub(template, String(args[0]), args[1] as Record<string, unknown>);
    default:
      throw new Error(`${template.stackName}: intrinsic ${name} is not supported by the evaluation`);
  }
};

/** The logical ids of the resources of one type. */
export const resourcesOfType = (template: CfnTemplate, type: string): [string, CfnResource][] =>
  Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);

/** The logical id a `{ Ref }` or `{ Fn::GetAtt }` points at. */
export const referencedId = (value: unknown): string | undefined => {
  const reference = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] } | undefined;
  return reference?.Ref ?? reference?.['Fn::GetAtt']?.[0];
};

/** Every policy a role of the template holds: inline, attached AWS::IAM::Policy resources, and AWS managed policies. */
export const roleIdentityPolicies = (template: CfnTemplate, roleLogicalId: string, resolve: Resolver): PolicyDocument[] => {
  const role = template.Resources[roleLogicalId];
  if (role?.Type !== 'AWS::IAM::Role') throw new Error(`${roleLogicalId} is not a role of the template`);
  const inline = ((role.Properties?.Policies ?? []) as { PolicyDocument: unknown }[]).map((policy) => resolve(policy.PolicyDocument));
  const attached = resourcesOfType(template, 'AWS::IAM::Policy')
    .filter(([, policy]) => ((policy.Properties?.Roles ?? []) as unknown[]).some((entry) => referencedId(entry) === roleLogicalId))
    .map(([, policy]) => resolve(policy.Properties?.PolicyDocument));
  const managed = ((role.Properties?.ManagedPolicyArns ?? []) as unknown[]).map((entry) => {
    const name = String(resolve(entry)).replace(/^arn:aws:iam::aws:policy\//, '');
    const policy = awsManagedPolicies[name];
    if (policy === undefined) throw new Error(`${roleLogicalId} attaches ${name}: add its document to awsManagedPolicies`);
    return policy;
  });
  return [...inline, ...attached, ...managed] as PolicyDocument[];
};

/** A role's trust policy, which decides who may assume it. */
export const roleTrustPolicy = (template: CfnTemplate, roleLogicalId: string, resolve: Resolver): PolicyDocument =>
  resolve(template.Resources[roleLogicalId]?.Properties?.AssumeRolePolicyDocument) as PolicyDocument;

/** The session ARN a role's caller acts as. */
export const roleSession = (roleArn: string): string => {
  const name = roleArn.split('/').pop();
  return `arn:aws:sts::${evaluationAccount}:assumed-role/${name}/session`;
};
