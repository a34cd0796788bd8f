/**
 * Stage isolation, evaluated by an IAM policy simulator (@cloud-copilot/iam-simulate) over the
 * the pipeline setup of docs/deploying.md as it is written: the policies in docs/pipeline/, filled in by the
 * guide's own `fill` function, and the roles of CDK's bootstrap template as the guide's
 * `cdk bootstrap` command creates them in each stage's own account.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import { describe, expect, it } from 'vitest';
import { bootstrapRoles, type PolicyDocument } from '../lib/bootstrap.ts';
import { accounts, permissionsPolicy, pipelineRole, region, repository, type Stage, trustPolicy } from '../lib/pipeline-policies.ts';
import { repoRoot, sharedApp } from '../lib/cdk.ts';

const readme = readFileSync(join(repoRoot, 'docs/deploying.md'), 'utf8');
const other = (stage: Stage): Stage => (stage === 'staging' ? 'production' : 'staging');

/** The roles `npx cdk bootstrap aws://<account>/<region>` (the deploy guide's command: no --trust, no --qualifier) creates. */
const bootstrapped = (stage: Stage) => bootstrapRoles(accounts[stage], region);
const cdkRoles = ['deploy', 'filePublishing', 'lookup'] as const;

const simulate = async (simulation: Omit<Simulation, 'serviceControlPolicies' | 'resourceControlPolicies'>) => {
  const response = await runSimulation({ serviceControlPolicies: [], resourceControlPolicies: [], ...simulation }, {});
  if (response.resultType === 'error') throw new Error(`the simulator refused the request: ${JSON.stringify(response.errors)}`);
  return response.overallResult;
};

/** May `principal` (with `identityPolicy`) call sts:AssumeRole on `role` (with its trust policy)? */
const assumeRole = (principal: string, identityPolicy: PolicyDocument, role: { arn: string; trustPolicy: PolicyDocument }) =>
  simulate({
    identityPolicies: [{ name: 'deploy-role-permissions', policy: identityPolicy }],
    resourcePolicy: role.trustPolicy,
    request: {
      action: 'sts:AssumeRole',
      principal,
      resource: { accountId: role.arn.split(':')[4]!, resource: role.arn },
      contextVariables: {},
    },
  });

describe("one AWS account per stage: what each stage's pipeline identity may assume", () => {
  it.each(['staging', 'production'] as const)(
    "the %s identity cannot assume the other stage's deploy, file-publishing or lookup role",
    async (stage) => {
      for (const name of cdkRoles) {
        const target = bootstrapped(other(stage))[name];
        expect([name, await assumeRole(pipelineRole(stage), permissionsPolicy(stage), target)]).toEqual([name, 'ImplicitlyDenied']);
      }
    },
  );

  it.each(['staging', 'production'] as const)(
    "the %s identity can assume its own account's deploy and file-publishing roles (so the setup deploys), not the lookup role",
    async (stage) => {
      const own = bootstrapped(stage);
      expect(await assumeRole(pipelineRole(stage), permissionsPolicy(stage), own.deploy)).toBe('Allowed');
      expect(await assumeRole(pipelineRole(stage), permissionsPolicy(stage), own.filePublishing)).toBe('Allowed');
      expect(await assumeRole(pipelineRole(stage), permissionsPolicy(stage), own.lookup)).toBe('ImplicitlyDenied');
    },
  );

  it("holds even if a stage's identity policy allowed every role: the other account's bootstrap roles trust only their own account", async () => {
    const anything = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'sts:AssumeRole', Resource: '*' }] };
    for (const stage of ['staging', 'production'] as const)
      for (const name of cdkRoles)
        expect([stage, name, await assumeRole(pipelineRole(stage), anything, bootstrapped(other(stage))[name])]).toEqual([
          stage,
          name,
          'ImplicitlyDenied',
        ]);
  });

  it('is what one shared account could not give (the setup this README had): the staging identity assumed the deploy role production uses', async () => {
    const shared = bootstrapRoles(accounts.staging, region);
    const oldPolicy = {
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: 'sts:AssumeRole', Resource: `arn:aws:iam::${accounts.staging}:role/cdk-hnb659fds-*` }],
    };
    expect(await assumeRole(pipelineRole('staging'), oldPolicy, shared.deploy)).toBe('Allowed');
  });

  it("nor a qualifier per stage in one account: the staging qualifier's deploy role may still change the production stack", async () => {
    const stagingOnly = bootstrapRoles(accounts.staging, region, { Qualifier: 'staging' });
    const productionStack = `arn:aws:cloudformation:${region}:${accounts.staging}:stack/StoreOrders-production/0a1b2c3d`;
    for (const action of ['cloudformation:CreateChangeSet', 'cloudformation:ExecuteChangeSet', 'cloudformation:UpdateStack'])
      expect([
        action,
        await simulate({
          identityPolicies: stagingOnly.deploy.inlinePolicies.map((policy, index) => ({ name: `default-${index}`, policy })),
          request: {
            action,
            principal: stagingOnly.deploy.arn,
            resource: { accountId: accounts.staging, resource: productionStack },
            contextVariables: {},
          },
        }),
      ]).toEqual([action, 'Allowed']);
  });
});

describe("the pipeline identity's trust: only this repository's job in that stage's environment, on main", () => {
  const provider = (stage: Stage) => `arn:aws:iam::${accounts[stage]}:oidc-provider/token.actions.githubusercontent.com`;
  type Token = { sub: string; repository: string; environment?: string; ref: string; aud?: string };
  const token = (environment: string, ref = 'refs/heads/main'): Token => ({
    sub: `repo:${repository}:environment:${environment}`,
    repository,
    environment,
    ref,
  });
  // The simulator's condition-key data (AWS's service authorization reference) lists GitHub's
  // repository, environment and ref claims for sts:AssumeRoleWithWebIdentity but not the generic
  // OIDC aud and sub; it would drop those from the request. They are renamed, in the policy and
  // the request alike, to a provider's aud and sub it knows: the same StringEquals, evaluated.
  const known = (key: string) => key.replace(/^token\.actions\.githubusercontent\.com:(aud|sub)$/, 'accounts.google.com:$1');
  const renamed = (policy: PolicyDocument): PolicyDocument =>
    JSON.parse(JSON.stringify(policy), function (this: unknown, key: string, value: unknown) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
      return Object.fromEntries(Object.entries(value).map(([name, inner]) => [known(name), inner]));
    }) as PolicyDocument;

  const assumeWithToken = (stage: Stage, claims: Token) =>
    simulate({
      identityPolicies: [],
      resourcePolicy: renamed(trustPolicy(stage)),
      request: {
        action: 'sts:AssumeRoleWithWebIdentity',
        principal: provider(stage),
        resource: { accountId: accounts[stage], resource: pipelineRole(stage) },
        contextVariables: Object.fromEntries(
          Object.entries({ aud: 'sts.amazonaws.com', ...claims })
            .filter(([, value]) => value !== undefined)
            .map(([claim, value]) => [known(`token.actions.githubusercontent.com:${claim}`), value as string]),
        ),
      },
    });

  it.each(['staging', 'production'] as const)("the %s environment's job on main gets its stage's identity", async (stage) => {
    expect(await assumeWithToken(stage, token(stage))).toBe('Allowed');
  });

  it.each(['staging', 'production'] as const)('the %s identity is refused to any other token', async (stage) => {
    const refused: Token[] = [
      token(other(stage)), // the other stage's environment
      token(stage, 'refs/heads/feature'), // another branch naming this environment
      token(stage, 'refs/pull/7/merge'),
      { ...token(stage), sub: `repo:${repository}:pull_request`, environment: undefined }, // a pull request's job
      { ...token(stage), sub: `repo:${repository}:ref:refs/heads/main`, environment: undefined }, // a job without an environment
      { ...token(stage), sub: `repo:evil/fork:environment:${stage}`, repository: 'evil/fork' }, // another repository
      { ...token(stage), aud: 'https://github.com/acme' }, // a token minted for another audience
    ];
    for (const claims of refused) expect([claims, await assumeWithToken(stage, claims)]).toEqual([claims, 'ImplicitlyDenied']);
  });
});

describe("the deploy guide's setup matches what the stacks ask for", () => {
  const { app } = sharedApp();
  const assembly = app.synth();

  it('bootstraps each account on its own, with the default qualifier and no other account trusted', () => {
    const commands = [...readme.matchAll(/^ *(npx cdk bootstrap.*)$/gm)].map((match) => match[1]!);
    expect(commands.length).toBeGreaterThan(0);
    for (const command of commands) {
      expect(command).toMatch(/^npx cdk bootstrap aws:\/\/"?\$\w+"?\/"?\$\w+"?/);
      expect(command).not.toMatch(/--trust|--qualifier|--trust-for-lookup/);
    }
  });

  it.each(['staging', 'production'] as const)(
    'the roles the %s stack deploys with (its synthesizer) are the ones the permissions policy names',
    (stage) => {
      const inAccount = (arn: string) =>
        arn.replaceAll('${AWS::Partition}', 'aws').replaceAll('${AWS::AccountId}', accounts[stage]).replaceAll('${AWS::Region}', region);
      const artifact = assembly.getStackArtifact(`StoreOrders-${stage}`);
      const assets = JSON.parse(readFileSync(join(assembly.directory, `StoreOrders-${stage}.assets.json`), 'utf8')) as {
        files: Record<string, { destinations: Record<string, { assumeRoleArn: string }> }>;
      };
      const publishing = new Set(
        Object.values(assets.files).flatMap((file) => Object.values(file.destinations).map((to) => inAccount(to.assumeRoleArn))),
      );
      const granted = permissionsPolicy(stage)
        .Statement.filter((statement) => ([] as unknown[]).concat(statement.Action).includes('sts:AssumeRole'))
        .flatMap((statement) => statement.Resource as string[]);
      expect(granted.sort()).toEqual([inAccount(artifact.assumeRoleArn!), ...publishing].sort());
      expect(bootstrapped(stage).deploy.arn).toBe(inAccount(artifact.assumeRoleArn!));
    },
  );
});
