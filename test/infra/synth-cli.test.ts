import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stages } from '../../infra/stage-config.ts';
import { routes } from '../../infra/registry.ts';
import { accountStackName, budgetStackName } from '../../infra/names.ts';
import { repoRoot, tempDir } from '../lib/cdk.ts';

/** This process's environment without anything that could give the CLI AWS credentials or a target. */
const withoutAws = (): NodeJS.ProcessEnv => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(AWS_|CDK_)/.test(name)));
  const nowhere = join(tempDir('store-orders-no-aws-'), 'none');
  return {
    ...env,
    AWS_CONFIG_FILE: nowhere,
    AWS_SHARED_CREDENTIALS_FILE: nowhere,
    // Do not wait for an instance metadata service that is not there.
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
    // The app runs on the Node.js the tests run on (24, from the project's node devDependency).
    PATH: [dirname(process.execPath), join(repoRoot, 'node_modules/.bin'), process.env.PATH].join(delimiter),
  };
};

/** AWS's CloudFormation linter, where the machine has it (it comes from PyPI, which CI machines here cannot reach). */
const cfnLint = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' }).status === 0;
if (!cfnLint) {
  console.warn(
    [
      '',
      '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!',
      '!!  cfn-lint is not installed: the synthesized CloudFormation templates were NOT linted. !!',
      '!!  Install it (pip install cfn-lint) and run npm test again before deploying.            !!',
      '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!',
      '',
    ].join('\n'),
  );
}

/** How long one `cdk synth` may run before it is taken for hung: a hang bound (one takes ~1 min alone, several under two suites at once). */
const synthHangMs = 900_000;

/**
 * `npx cdk synth [stacks]` under `env`, run asynchronously (a synchronous spawn would hold the test
 * worker, and its test timeout, until the synth ends), killed only if it hangs.
 */
const runSynth = (env: NodeJS.ProcessEnv, args: string[]) =>
  new Promise<{ status: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve, reject) => {
    const child = spawn('npx', ['cdk', 'synth', ...args], { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), synthHangMs);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stderr });
    });
  });

/**
 * The assembly `npx cdk synth` writes under `env`: its manifest and every template, by stack name.
 * With `only`, the CLI selects that stack alone (`--exclusively`), and bundles only its assets
 * (the CLI passes the selection as the app's bundling stacks): the other stacks' templates are
 * still written, their functions' code unbundled. Cheaper, and what the cases that pass it assert
 * (where the stacks land) does not depend on the functions' code.
 */
const synthesize = async (env: NodeJS.ProcessEnv, outdir: string, only?: string) => {
  const result = await runSynth(env, [...(only === undefined ? [] : [only, '--exclusively']), '--quiet', '--no-notices', '-o', outdir]);
  expect(result.status, `${result.signal ?? ''} ${result.stderr}`).toBe(0);
  const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8'));
  const templates = Object.fromEntries(
    readdirSync(outdir)
      .filter((file) => file.endsWith('.template.json'))
      .map((file) => [file.replace(/\.template\.json$/, ''), readFileSync(join(outdir, file), 'utf8')]),
  );
  return { manifest, templates };
};

const stackNames = [
  accountStackName,
  ...Object.values(stages).flatMap((config) => [budgetStackName(config.stage), config.stackName]),
].sort();

/**
 * What docs/reference/stages.md#where-a-deploy-lands promises: every stack is environment-agnostic,
 * so the account and region are those of the credentials and region the deploy runs with, whatever
 * the machine that synthesized the assembly had configured. Nothing region-specific is in a template.
 */
const expectEnvironmentAgnostic = ({ manifest, templates }: Awaited<ReturnType<typeof synthesize>>, regions: string[]) => {
  const environments = Object.fromEntries(
    Object.entries(manifest.artifacts as Record<string, { type: string; environment?: string }>)
      .filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack')
      .map(([name, artifact]) => [name, artifact.environment]),
  );
  expect(Object.keys(environments).sort()).toEqual(stackNames);
  for (const name of stackNames) expect(environments[name], name).toBe('aws://unknown-account/unknown-region');
  expect(Object.keys(templates).sort()).toEqual(stackNames);
  for (const [name, text] of Object.entries(templates)) {
    // Conditions are left out: CDK's metadata condition lists every region that has the metadata resource.
    const { Resources, Outputs, Parameters } = JSON.parse(text);
    const pinned = JSON.stringify({ Resources, Outputs, Parameters });
    for (const region of regions) expect(pinned.includes(region), `${name} names ${region}`).toBe(false);
  }
};

describe('npx cdk synth', () => {
  const outdir = tempDir('store-orders-synth-');

  // The pipeline: no credentials, the environment's region in AWS_REGION (the deploy job's
  // credentials decide later). The one full synth of this file, bundling included, as the pipeline
  // runs it. Without any region the CLI sets CDK_DEFAULT_REGION to us-east-1 for the app, which
  // test/infra/app.test.ts sets in process; so us-east-1 is looked for here too, and no third
  // `cdk synth` (a minute or more on a busy machine) is spent on that case.
  it(
    'synthesizes every stack as the pipeline does, no AWS credentials and the region in AWS_REGION, environment-agnostic',
    { timeout: 960_000 },
    async () => {
      const assembly = await synthesize({ ...withoutAws(), AWS_REGION: 'eu-west-1', AWS_DEFAULT_REGION: 'eu-west-1' }, outdir);
      expectEnvironmentAgnostic(assembly, ['eu-west-1', 'us-east-1']);
      for (const config of Object.values(stages)) {
        const stackTemplate = JSON.parse(assembly.templates[config.stackName]!);
        // The service's functions (one per route, and the authorizer) and the pre-traffic hook.
        expect(Object.values(stackTemplate.Resources).filter((r) => (r as { Type: string }).Type === 'AWS::Lambda::Function')).toHaveLength(
          routes.length + 2,
        );
      }
      expect(existsSync(join(outdir, 'validation-report.json'))).toBe(true);
    },
  );

  // An engineer: a named profile with its region in ~/.aws/config (no credentials needed for synth).
  it("stays environment-agnostic under a profile with a region, as an engineer's shell synthesizes", { timeout: 960_000 }, async () => {
    const dir = tempDir('store-orders-profile-');
    const config = join(dir, 'config');
    writeFileSync(config, '[profile store-orders-test]\nregion = ap-southeast-2\n');
    const assembly = await synthesize(
      { ...withoutAws(), AWS_CONFIG_FILE: config, AWS_PROFILE: 'store-orders-test' },
      tempDir('store-orders-synth-'),
      accountStackName,
    );
    expectEnvironmentAgnostic(assembly, ['ap-southeast-2', 'us-east-1']);
  });

  // Catches what CloudFormation would refuse at deploy time, e.g. a circular dependency between
  // resources, which neither the CDK nor a template test notices. Ignored checks: .cfnlintrc.yaml.
  it.runIf(cfnLint)('writes templates that cfn-lint passes: no errors, no warnings but the explained ones', { timeout: 960_000 }, () => {
    const templates = readdirSync(outdir).filter((file) => file.endsWith('.template.json'));
    expect(templates.sort()).toEqual([
      'StoreOrders-account.template.json',
      'StoreOrders-budget-production.template.json',
      'StoreOrders-budget-staging.template.json',
      'StoreOrders-production.template.json',
      'StoreOrders-staging.template.json',
    ]);
    const result = spawnSync(
      'cfn-lint',
      ['--config-file', join(repoRoot, '.cfnlintrc.yaml'), ...templates.map((file) => join(outdir, file))],
      {
        encoding: 'utf8',
      },
    );
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});

/**
 * The first `node` on the PATH a user's shell would have: not the project's pinned Node (which
 * npm puts first for scripts), e.g. the system's Node 20, which cannot run the TypeScript files.
 */
const shellPath = () => {
  const pinned = dirname(process.execPath);
  return (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== pinned && !dir.includes('node_modules'));
};
const firstNode = (path: string[]) =>
  path
    .map((dir) => join(dir, 'node'))
    .find((file) => {
      try {
        accessSync(file, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });

describe("cdk.json's app command", () => {
  it("starts the app on the project's Node 24 when the first node on the PATH is another (as under a global cdk)", () => {
    const path = shellPath();
    const node = firstNode(path);
    const version = node === undefined ? 'none' : spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
    // On this project's machines that first node is the system's Node 20; say which one the test ran under.
    console.info(`cdk.json app command run with ${node ?? 'no node'} (${version}) first on the PATH`);
    const app = JSON.parse(readFileSync(join(repoRoot, 'cdk.json'), 'utf8')).app as string;
    expect(app).toMatch(/ infra\/cdk\/app\.ts$/);
    // The command with a TypeScript file in place of the app (the synth test above runs the app
    // itself): only a Node that strips types runs it, and it says which Node that is.
    const probe = join(tempDir('store-orders-app-'), 'probe.ts');
    writeFileSync(probe, 'const version: string = process.versions.node;\nconsole.log(version);\n');
    // What the CDK CLI does: run the app command in a shell, from the folder of cdk.json.
    const result = spawnSync(app.replace(/infra\/cdk\/app\.ts$/, probe), {
      shell: true,
      cwd: repoRoot,
      encoding: 'utf8',
      env: { ...withoutAws(), PATH: path.join(delimiter) },
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.trim()).toMatch(/^24\./);
  });
});
