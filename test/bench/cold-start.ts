/**
 * Cold start, part of `npm run bench`: how long a fresh Node process takes to import each
 * function's bundle (what a Lambda init pays before its first request), as a ratio to a floor
 * measured in the same run: a bundle that only creates the DynamoDB document client every
 * function of this service needs. Bundled as the CDK stack bundles them (esbuild, minified ESM,
 * SDK inside) and imported with the stack's NODE_OPTIONS. Exits 0 unless BENCH_STRICT=1 and a
 * target is missed. Progress goes to stderr, the table to stdout, every sample to
 * .local/cold-start-<time>.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import { type FunctionName, functionEnvironment, functionSettings } from '../../infra/function-settings.ts';
import { stages } from '../../infra/stage-config.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const runs = Number(process.env.BENCH_COLD_RUNS ?? 9);
const limit = 2.0;

// What infra/store-function.ts asks of esbuild (source maps included: Lambda loads them too).
const bundleOptions: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  banner: {
    js: "import { createRequire as storeOrdersCreateRequire } from 'node:module'; const require = storeOrdersCreateRequire(import.meta.url);",
  },
  logLevel: 'error',
};

const floorSource = `
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
const client = DynamoDBDocumentClient.from(new DynamoDBClient({}), { unmarshallOptions: { wrapNumbers: true } });
export const handler = async () => client;
`;

// Each function's handler and the environment the production stack gives it (infra/function-settings.ts).
const functions = Object.fromEntries(
  (Object.keys(functionSettings) as FunctionName[]).map((name) => [
    name,
    {
      entry: functionSettings[name].handlerFile,
      environment: functionEnvironment(name, stages.production, { orders: 'orders', apiKeys: 'api-keys', listLeases: 'list-leases' }),
    },
  ]),
);

/** Milliseconds a fresh process spends importing `file` (the Lambda streaming globals stubbed, as Lambda provides them). */
const importMs = (file: string, nodeOptions: string, environment: Record<string, string> = {}): number => {
  const script = `
    globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } };
    const started = performance.now();
    await import(${JSON.stringify(pathToFileURL(file).href)});
    console.log(performance.now() - started);`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, ...environment, NODE_OPTIONS: nodeOptions, AWS_REGION: 'us-east-1' },
  });
  if (result.status !== 0) throw new Error(`importing ${file} failed: ${result.stderr}`);
  return Number(result.stdout.trim());
};

const started = performance.now();
const log = (message: string) => process.stderr.write(`[cold start ${Math.round((performance.now() - started) / 1000)} s] ${message}\n`);
const outFile = resolve(repoRoot, `.local/cold-start-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const main = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cold-start-'));
  try {
    const bundles: Record<string, string> = {};
    log(`step 1/2: bundling the floor and ${Object.keys(functions).length} functions as the stack does…`);
    await build({
      ...bundleOptions,
      stdin: { contents: floorSource, resolveDir: repoRoot, loader: 'ts' },
      outfile: join(dir, 'floor.mjs'),
    });
    bundles.floor = join(dir, 'floor.mjs');
    for (const [name, { entry }] of Object.entries(functions)) {
      await build({ ...bundleOptions, entryPoints: [resolve(repoRoot, entry)], outfile: join(dir, `${name}.mjs`) });
      bundles[name] = join(dir, `${name}.mjs`);
    }
    // Interleaved rounds, so machine noise falls on every bundle alike.
    const times: Record<string, number[]> = {};
    log(`step 2/2: importing each bundle in a fresh Node process, ${runs} rounds…`);
    for (let round = 0; round < runs; round++) {
      log(`  round ${round + 1}/${runs}`);
      for (const [name, file] of Object.entries(bundles)) {
        const environment = functions[name]?.environment;
        (times[name] ??= []).push(importMs(file, '--enable-source-maps', environment));
        if (name !== 'floor') (times[`${name} (no source maps)`] ??= []).push(importMs(file, '', environment));
      }
    }
    const floor = median(times.floor!);
    const lines = [
      `Cold start: import of each bundle in a fresh Node ${process.version} process, median of ${runs}, NODE_OPTIONS=--enable-source-maps unless said`,
      '',
      `${'bundle'.padEnd(36)}${'KB'.padStart(8)}${'median ms'.padStart(12)}${'ratio'.padStart(10)}`,
    ];
    const targets: string[] = [];
    let missed = 0;
    for (const [name, values] of Object.entries(times)) {
      const file = bundles[name.replace(' (no source maps)', '')]!;
      const kb = Math.round((await stat(file)).size / 1024);
      const ms = median(values);
      const ratio = name === 'floor' ? '' : `${(ms / floor).toFixed(2)}×`;
      lines.push(
        `${(name === 'floor' ? 'floor: SDK document client only' : name).padEnd(36)}${String(kb).padStart(8)}${ms.toFixed(1).padStart(12)}${ratio.padStart(10)}`,
      );
      if (name in functions) {
        const pass = ms / floor <= limit;
        if (!pass) missed++;
        targets.push(
          `  ${pass ? 'PASS' : 'MISS'}  ${name} cold import ≤ ${limit.toFixed(1)}× the SDK-client floor`.padEnd(72) +
            `${(ms / floor).toFixed(2)} ×`,
        );
      }
    }
    await mkdir(dirname(outFile), { recursive: true });
    await writeFile(outFile, `${JSON.stringify({ node: process.version, runs, limit, importMs: times }, null, 2)}\n`);
    console.log([...lines, '', 'targets:', ...targets, '', `Every sample: ${relative(process.cwd(), outFile)}`].join('\n'));
    if (missed > 0 && process.env.BENCH_STRICT === '1') process.exitCode = 1;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

await main();
