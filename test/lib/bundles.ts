/**
 * Running a synthesized function bundle as Lambda would: its code directory and its template's
 * settings (handler, timeout, memory, environment with references resolved to test values), on
 * the runtime stand-in (./lambda-runtime.ts), in a process of its own.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { tempDir } from './cdk.ts';
import type { Invocation, Outcome, Plan } from './lambda-runtime.ts';
import { resolve, type Template } from './template.ts';

const runtimeScript = resolvePath(import.meta.dirname, 'lambda-runtime.ts');

/** A function as deployed: where its bundle is, its template properties, and its environment. */
export type DeployedFunction = { codeDir: string; properties: Record<string, unknown>; environment: Record<string, string> };

export type Line = Record<string, unknown>;
export type Run = { outcomes: Outcome[]; lines: Line[]; output: string };

/**
 * The function `functionLogicalId` of template `t` (synthesized into `outdir`), its environment's
 * `${Ref}` placeholders replaced by `values` (a table's name for its logical id, `AWS::Region`…).
 */
export const deployedFunction = (
  t: Template,
  outdir: string,
  functionLogicalId: string,
  values: Record<string, string>,
  extra: Record<string, string> = {},
): DeployedFunction => {
  const properties = t.Resources[functionLogicalId]!.Properties;
  const variables = (properties.Environment as { Variables: Record<string, unknown> }).Variables;
  const environment = Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [
      name,
      String(resolve(value)).replaceAll(/\$\{([\w:.]+)\}/g, (_all, ref: string) => {
        if (values[ref] === undefined) throw new Error(`${name} refers to ${ref}, which the test cannot provide`);
        return values[ref];
      }),
    ]),
  );
  const codeDir = join(outdir, `asset.${String((properties.Code as { S3Key: string }).S3Key).replace(/\.zip$/, '')}`);
  return { codeDir, properties, environment: { ...environment, ...extra } };
};

/** The variables Lambda sets for a function with a LoggingConfig: its log format, and its application log level in JSON format. */
const loggingControls = (config: { LogFormat?: string; ApplicationLogLevel?: string } | undefined): Record<string, string> =>
  config?.LogFormat === 'JSON' ? { AWS_LAMBDA_LOG_FORMAT: 'JSON', AWS_LAMBDA_LOG_LEVEL: config.ApplicationLogLevel ?? 'INFO' } : {};

/** The stand-in's plan file, its results file and the process environment Lambda would give the function. */
const prepare = (fn: DeployedFunction, invocations: Invocation[]) => {
  const dir = tempDir('store-orders-contract-');
  const name = `contract-${Math.random().toString(36).slice(2, 8)}`;
  const p = fn.properties;
  const plan: Plan = {
    codeDir: fn.codeDir,
    handler: String(p.Handler),
    functionName: name,
    memorySize: Number(p.MemorySize),
    timeoutSeconds: Number(p.Timeout),
    invocations,
  };
  writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan));
  const env = {
    PATH: process.env.PATH,
    // What the Lambda runtime sets for every function (credentials here reach DynamoDB Local).
    AWS_LAMBDA_FUNCTION_NAME: name,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(p.MemorySize),
    AWS_LAMBDA_FUNCTION_VERSION: '1',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${name}`,
    AWS_EXECUTION_ENV: `AWS_Lambda_${String(p.Runtime)}`,
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    // The function's credentials: those the run's DynamoDB Local answers to (test/worker-environment.ts).
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'local',
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
    LAMBDA_TASK_ROOT: fn.codeDir,
    _HANDLER: String(p.Handler),
    TZ: ':UTC',
    // Lambda's advanced logging controls, as Lambda hands them to the runtime (and Powertools reads them).
    ...loggingControls(p.LoggingConfig as { LogFormat?: string; ApplicationLogLevel?: string } | undefined),
    // The function's own environment, exactly as the template sets it (references resolved).
    ...fn.environment,
  };
  return { args: [runtimeScript, join(dir, 'plan.json'), join(dir, 'results.json')], env, resultsFile: join(dir, 'results.json') };
};

const finish = (resultsFile: string, status: number | null, stdout: string, stderr: string): Run => {
  if (status !== 0) throw new Error(`the runtime stand-in failed: ${stderr}`);
  const output = `${stdout}${stderr}`;
  const lines = output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Line;
      } catch {
        return { unparsable: line };
      }
    });
  return { outcomes: JSON.parse(readFileSync(resultsFile, 'utf8')) as Outcome[], lines, output };
};

/** One execution environment of one function, running `invocations` in turn. */
export const runBundle = (fn: DeployedFunction, invocations: Invocation[]): Run => {
  const { args, env, resultsFile } = prepare(fn, invocations);
  const result = spawnSync(process.execPath, args, { encoding: 'utf8', env });
  return finish(resultsFile, result.status, result.stdout, result.stderr);
};

/** The same without blocking this process: for a bundle that calls servers living in the test. */
export const runBundleAsync = async (fn: DeployedFunction, invocations: Invocation[]): Promise<Run> => {
  const { args, env, resultsFile } = prepare(fn, invocations);
  const child = spawn(process.execPath, args, { env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const status = await new Promise<number | null>((done) => child.on('close', done));
  return finish(resultsFile, status, stdout, stderr);
};
