/**
 * Cold start, part of `npm run bench`: how long a fresh Node process takes to import each
 * function's bundle (what a Lambda init pays before its first request), as a ratio to a floor
 * measured in the same run. Each bundle is the one `cdk synth` makes for the production stack
 * (the real app, real esbuild bundling), imported with the environment its template gives the
 * function, NODE_OPTIONS included. The floor is test/perf/cold-start-floor.ts (the DynamoDB
 * document client alone) bundled by a NodejsFunction with the functions' own bundling options
 * and imported with their NODE_OPTIONS. Both wall-clock and CPU time are recorded: on a shared
 * machine, wall-clock includes waiting for a core; CPU time is the work Lambda would bill.
 * Exits 0 unless BENCH_STRICT=1 and a target is missed. Progress goes to stderr, the table to
 * stdout, every sample to .local/cold-start-<time>.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { createApp } from '../../infra/cdk/app.ts';
import { stages } from '../../infra/stage-config.ts';
import { functionBundling, repoRoot, type StoreFunction } from '../../infra/cdk/store-function.ts';
import type { StoreOrdersStack } from '../../infra/cdk/store-orders-stack.ts';

const runs = Number(process.env.BENCH_COLD_RUNS ?? 9);
const limit = 1.2;

type Bundle = { file: string; environment: Record<string, string> };
type Template = { Resources: Record<string, { Properties: Record<string, unknown> }> };

/** A function's bundle as its template points at it: the asset directory and the Handler's file. */
const shippedBundle = (outdir: string, template: Template, logicalId: string): Bundle => {
  const properties = template.Resources[logicalId]!.Properties as {
    Code: { S3Key: string };
    Handler: string;
    Environment?: { Variables: Record<string, unknown> };
  };
  const dir = join(outdir, `asset.${properties.Code.S3Key.replace(/\.zip$/, '')}`);
  // Table names are references CloudFormation resolves at deploy time: any valid name does here.
  const environment = Object.fromEntries(
    Object.entries(properties.Environment?.Variables ?? {}).map(([name, value]) => [
      name,
      typeof value === 'string' ? value : `cold-start-${name.toLowerCase()}`,
    ]),
  );
  return { file: join(dir, `${properties.Handler.split('.')[0]}.mjs`), environment };
};

/** The production stack's functions, synthesized as `cdk synth` does (bundles included). */
const synthFunctions = async (outdir: string): Promise<Record<string, Bundle>> => {
  const { stackName } = stages.production;
  const { context } = JSON.parse(await readFile(join(repoRoot, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
  const app = createApp({ outdir, context: { ...context, 'aws:cdk:bundling-stacks': [stackName] } }, undefined, { controlTower: false });
  const template = app.synth().getStackByName(stackName).template as Template;
  const stack = app.node.findChild(stackName) as StoreOrdersStack;
  const bundleOf = (fn: StoreFunction) =>
    shippedBundle(outdir, template, stack.getLogicalId(fn.function.node.defaultChild as lambda.CfnFunction));
  return {
    authorizer: bundleOf(stack.authorizerFunction),
    ...Object.fromEntries(stack.routeFunctions.map(({ route, fn }) => [route.operation, bundleOf(fn)])),
  };
};

/** The floor, bundled by the CDK with the functions' bundling options. */
const synthFloor = (outdir: string, nodeOptions: string, entry = 'test/perf/cold-start-floor.ts'): Bundle => {
  const app = new App({ outdir });
  const stack = new Stack(app, 'ColdStartFloor');
  const fn = new NodejsFunction(stack, 'Floor', {
    entry: join(repoRoot, entry),
    projectRoot: repoRoot,
    depsLockFilePath: join(repoRoot, 'package-lock.json'),
    runtime: lambda.Runtime.NODEJS_24_X,
    architecture: lambda.Architecture.ARM_64,
    bundling: functionBundling,
  });
  const template = app.synth().getStackByName(stack.stackName).template as Template;
  const floor = shippedBundle(outdir, template, stack.getLogicalId(fn.node.defaultChild as lambda.CfnFunction));
  return { ...floor, environment: { NODE_OPTIONS: nodeOptions } };
};

type Sample = { wallMs: number; cpuMs: number };

/** One fresh process importing `bundle` (the Lambda streaming globals stubbed, as Lambda provides them). */
const importOnce = (bundle: Bundle): Sample => {
  const script = `
    globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } };
    const cpu = process.cpuUsage();
    const started = performance.now();
    await import(${JSON.stringify(pathToFileURL(bundle.file).href)});
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    console.log(JSON.stringify({ wallMs, cpuMs: (used.user + used.system) / 1000 }));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '', AWS_REGION: 'us-east-1', ...bundle.environment },
  });
  if (result.status !== 0) throw new Error(`importing ${bundle.file} failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim()) as Sample;
};

const started = performance.now();
const log = (message: string) => process.stderr.write(`[cold start ${Math.round((performance.now() - started) / 1000)} s] ${message}\n`);
const outFile = resolve(repoRoot, `.local/cold-start-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Step 1: every function's bundle as `cdk synth` makes it, and the floors, bundled the same way. */
const buildBundles = async (dir: string) => {
  log('step 1/2: cdk synth of the production stack (real bundling), and the floor with the same bundling…');
  const functions = await synthFunctions(join(dir, 'app'));
  const nodeOptions = [...new Set(Object.values(functions).map(({ environment }) => environment.NODE_OPTIONS ?? ''))];
  if (nodeOptions.length !== 1)
    throw new Error(`the functions differ in NODE_OPTIONS (${nodeOptions.join(' | ')}): which would the floor take?`);
  const bundles: Record<string, Bundle> = {
    floor: synthFloor(join(dir, 'floor'), nodeOptions[0]!),
    // Its ratio to the floor is the cold-start cost of the DynamoDB call timing (shared/dynamo-calls.ts).
    'floor + call timing': synthFloor(join(dir, 'floor-timed'), nodeOptions[0]!, 'test/perf/cold-start-floor-timed.ts'),
    ...functions,
  };
  return { functions, bundles, nodeOptions: nodeOptions[0]! };
};

/** Step 2: each bundle imported in a fresh process, in interleaved rounds, so machine noise falls on every bundle alike. */
const sampleImports = (bundles: Record<string, Bundle>, functions: Record<string, Bundle>) => {
  const samples: Record<string, Sample[]> = {};
  log(`step 2/2: importing each bundle in a fresh Node process, ${runs} rounds…`);
  for (let round = 0; round < runs; round++) {
    log(`  round ${round + 1}/${runs}`);
    for (const [name, bundle] of Object.entries(bundles)) (samples[name] ??= []).push(importOnce(bundle));
    if (round === 0) for (const name of Object.keys(functions)) samples[`${name} (no NODE_OPTIONS)`] = [];
    for (const [name, bundle] of Object.entries(functions))
      samples[`${name} (no NODE_OPTIONS)`]!.push(importOnce({ ...bundle, environment: { ...bundle.environment, NODE_OPTIONS: '' } }));
  }
  return samples;
};

/** One row per bundle (size, wall and CPU time, their ratios to the floor), and each function's verdict against the limit. */
const reportRows = async (samples: Record<string, Sample[]>, bundles: Record<string, Bundle>, functions: Record<string, Bundle>) => {
  const floor = { wall: median(samples.floor!.map((s) => s.wallMs)), cpu: median(samples.floor!.map((s) => s.cpuMs)) };
  const rows: string[] = [];
  const targets: string[] = [];
  let missed = 0;
  for (const [name, values] of Object.entries(samples)) {
    const bundle = bundles[name.replace(' (no NODE_OPTIONS)', '')]!;
    const kb = Math.round((await stat(bundle.file)).size / 1024);
    const wall = median(values.map((s) => s.wallMs));
    const cpu = median(values.map((s) => s.cpuMs));
    const ratio = (ms: number, of: number) => (name === 'floor' ? '' : `${(ms / of).toFixed(2)}×`);
    rows.push(
      `${(name === 'floor' ? 'floor: SDK document client only' : name).padEnd(36)}${String(kb).padStart(6)}` +
        `${wall.toFixed(1).padStart(10)}${ratio(wall, floor.wall).padStart(8)}${cpu.toFixed(1).padStart(10)}${ratio(cpu, floor.cpu).padStart(8)}`,
    );
    if (!(name in functions)) continue;
    const pass = wall / floor.wall <= limit;
    if (!pass) missed++;
    targets.push(
      `  ${pass ? 'PASS' : 'MISS'}  ${name} cold import ≤ ${limit.toFixed(1)}× the SDK-client floor (wall-clock)`.padEnd(78) +
        `${(wall / floor.wall).toFixed(2)} × (CPU ${(cpu / floor.cpu).toFixed(2)} ×)`,
    );
  }
  return { rows, targets, missed };
};

const main = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cold-start-'));
  try {
    const { functions, bundles, nodeOptions } = await buildBundles(dir);
    const loadBefore = loadavg()[0]!;
    const samples = sampleImports(bundles, functions);
    const loadAfter = loadavg()[0]!;
    const { rows, targets, missed } = await reportRows(samples, bundles, functions);
    const heading = [
      `Cold start: import of each bundle as \`cdk synth\` makes it, in a fresh Node ${process.version} process, median of ${runs}, ` +
        `NODE_OPTIONS=${nodeOptions || '(none)'} unless said; ${new Date().toISOString()}, load average ${loadBefore.toFixed(1)} → ${loadAfter.toFixed(1)}`,
      '',
      `${'bundle'.padEnd(36)}${'KB'.padStart(6)}${'wall ms'.padStart(10)}${'ratio'.padStart(8)}${'CPU ms'.padStart(10)}${'ratio'.padStart(8)}`,
    ];
    await mkdir(dirname(outFile), { recursive: true });
    await writeFile(
      outFile,
      `${JSON.stringify({ node: process.version, runs, limit, nodeOptions, loadavg: [loadBefore, loadAfter], samples }, null, 2)}\n`,
    );
    console.log([...heading, ...rows, '', 'targets:', ...targets, '', `Every sample: ${relative(process.cwd(), outFile)}`].join('\n'));
    if (missed > 0 && process.env.BENCH_STRICT === '1') process.exitCode = 1;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

await main();
