/**
 * The roles `cdk bootstrap` creates, read from the bootstrap template of the CDK CLI this project
 * pins (node_modules/aws-cdk), as CloudFormation would resolve them for one account and region
 * and the command's parameters. Only the intrinsic functions that template uses are evaluated.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';

type Template = {
  Parameters: Record<string, { Default?: string; Type: string }>;
  Conditions: Record<string, unknown>;
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
};
export type PolicyDocument = { Version?: string; Statement: Record<string, unknown>[] };
export type BootstrapRole = { arn: string; trustPolicy: PolicyDocument; inlinePolicies: PolicyDocument[] };

const cliDir = dirname(createRequire(import.meta.url).resolve('aws-cdk/package.json'));
export const bootstrapTemplatePath = join(cliDir, 'lib/api/bootstrap/bootstrap-template.yaml');
const template = parse(readFileSync(bootstrapTemplatePath, 'utf8')) as Template;

/** CloudFormation's AWS::NoValue: the property or list item disappears. */
const noValue = Symbol('AWS::NoValue');

const resolver = (account: string, region: string, parameters: Record<string, string | string[]>) => {
  const values: Record<string, unknown> = { 'AWS::AccountId': account, 'AWS::Region': region, 'AWS::Partition': 'aws' };
  for (const [name, { Default, Type }] of Object.entries(template.Parameters)) {
    const value = parameters[name] ?? Default ?? '';
    values[name] = Type === 'CommaDelimitedList' && typeof value === 'string' ? (value === '' ? [''] : value.split(',')) : value;
  }
  const roleArn = (logicalId: string) => {
    const name = resolve(template.Resources[logicalId]?.Properties.RoleName);
    return `arn:aws:iam::${account}:role/${String(name)}`;
  };
  // A reference to another resource stands for that resource's name or ARN; the roles' are exact,
  // any other's (the staging bucket, the version parameter) is a recognisable stand-in.
  const sub = (text: string) =>
    text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
      if (name in values) return String(values[name]);
      const [logicalId = '', attribute] = name.split('.');
      const resource = template.Resources[logicalId];
      if (resource === undefined) throw new Error(`Fn::Sub of \${${name}} is not modelled`);
      if (resource.Type === 'AWS::IAM::Role' && attribute === 'Arn') return roleArn(logicalId);
      return `<${name}>`;
    });
  const condition = (name: string): boolean => resolve(template.Conditions[name]) as boolean;
  const resolve = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(resolve).filter((item) => item !== noValue);
    if (node === null || typeof node !== 'object') return node;
    const entries = Object.entries(node);
    const [key, argument] = entries.length === 1 ? entries[0]! : ['', undefined];
    switch (key) {
      case 'Ref':
        return argument === 'AWS::NoValue' ? noValue : values[argument as string];
      case 'Fn::Sub':
        return sub(argument as string);
      case 'Fn::If': {
        const [name, whenTrue, whenFalse] = argument as [string, unknown, unknown];
        return resolve(condition(name) ? whenTrue : whenFalse);
      }
      case 'Fn::Equals': {
        const [left, right] = (argument as unknown[]).map(resolve);
        return left === right;
      }
      case 'Fn::Not':
        return !(resolve((argument as unknown[])[0]) as boolean);
      case 'Fn::And':
        return (argument as unknown[]).every((item) => resolve(item) === true);
      case 'Fn::Join': {
        const [separator, list] = argument as [string, unknown];
        return (resolve(list) as unknown[]).join(separator);
      }
      case 'Condition':
        return condition(argument as string);
    }
    return Object.fromEntries(entries.map(([name, value]) => [name, resolve(value)] as const).filter(([, value]) => value !== noValue));
  };
  return { resolve, roleArn };
};

/**
 * The deploy, file-publishing and lookup roles of `cdk bootstrap aws://<account>/<region>`, with
 * `parameters` as the command's options set them (`Qualifier` for `--qualifier`,
 * `TrustedAccounts` for `--trust`).
 */
export const bootstrapRoles = (account: string, region: string, parameters: Record<string, string | string[]> = {}) => {
  const { resolve, roleArn } = resolver(account, region, parameters);
  const role = (logicalId: string): BootstrapRole => {
    const properties = resolve(template.Resources[logicalId]?.Properties) as {
      AssumeRolePolicyDocument: PolicyDocument;
      Policies?: { PolicyDocument: PolicyDocument }[];
    };
    return {
      arn: roleArn(logicalId),
      trustPolicy: { Version: '2012-10-17', ...properties.AssumeRolePolicyDocument },
      inlinePolicies: (properties.Policies ?? []).map((policy) => policy.PolicyDocument),
    };
  };
  return { deploy: role('DeploymentActionRole'), filePublishing: role('FilePublishingRole'), lookup: role('LookupRole') };
};
