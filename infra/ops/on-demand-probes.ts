/**
 * `npm run probes -- --stage <stage>`: the pre-traffic hook of a deployed stage, invoked once on
 * demand (`{"onDemand": true}`: functions/pre-traffic-hook/handler.ts). It runs the whole
 * known-answer suite against the versions the stage's last deploy published, under the hook's own
 * role, writing and deleting its orders in the reserved probe ids, and reports to no one: its lines
 * and summary are printed, exit code 1 unless it Succeeded. The first deploy of a stage runs no hook
 * (CodeDeploy only runs one when an alias moves), so the first-deploy steps run this before
 * production is ever deployed: the probes' IAM is proven there (docs/deploying.md). The caller needs
 * `lambda:InvokeFunction` on the hook function, and AWS credentials for the stage's account.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { parseArgs } from 'node:util';
import { preTrafficHookFunctionName } from '../names.ts';
import { type StageName, stages } from '../stage-config.ts';

const usage = `Usage: npm run probes -- --stage <stage> [--region <region>]
  invokes the stage's pre-traffic hook on demand: every known answer of every function, against
  the versions the stage runs, with the hook's own role (AWS credentials for the stage's account;
  lambda:InvokeFunction on the hook). Exit code 0 when every check passed, 1 otherwise.`;

/** What the hook returns on demand. */
type OnDemand = { status?: string; lines?: string[]; summary?: string };

/** The stage and region from the command line, or a usage message. */
const readOptions = (argv: string[]): { stage: StageName; region: string | undefined } | string => {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { stage: { type: 'string' }, region: { type: 'string' } },
    });
    if (positionals.length > 0) return `unexpected argument "${positionals[0]}"`;
    if (values.stage === undefined || !Object.hasOwn(stages, values.stage))
      return `--stage must be one of ${Object.keys(stages).join(', ')}; got "${values.stage ?? ''}"`;
    return { stage: values.stage as StageName, region: values.region };
  } catch (error) {
    return (error as Error).message;
  }
};

const main = async (argv: string[]): Promise<number> => {
  const options = readOptions(argv);
  if (typeof options === 'string') {
    console.log(`probes: ${options}\n\n${usage}`);
    return 2;
  }
  const functionName = preTrafficHookFunctionName(options.stage);
  console.log(`invoking ${functionName} on demand (its checks take up to 4.5 minutes)`);
  const lambda = new LambdaClient(options.region === undefined ? {} : { region: options.region });
  const out = await lambda.send(
    new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify({ onDemand: true })) }),
  );
  const text = Buffer.from(out.Payload ?? new Uint8Array()).toString('utf8');
  if (out.FunctionError !== undefined) {
    console.log(`the hook failed (${out.FunctionError}): ${text.slice(0, 500)}`);
    return 1;
  }
  const result = JSON.parse(text) as OnDemand;
  for (const line of result.lines ?? []) console.log(line);
  console.log(`${result.status ?? 'no status'}: ${result.summary ?? ''}`);
  return result.status === 'Succeeded' ? 0 : 1;
};

void main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.log(`probes: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    process.exitCode = 1;
  },
);
