/**
 * A stand-in for the Lambda Node.js runtime, for one function's bundle: run as
 * `node lambda-runtime.ts <plan.json> <results.json>` with the function's environment (from
 * the template) in process.env, it loads the bundle as the runtime does (the `Handler`
 * setting names file and export), provides the runtime's `awslambda` streaming interface
 * (HttpResponseStream writes the JSON prelude and 8 NUL bytes before the body, as the
 * runtime interface client does), and runs the planned invocations one after another, as
 * one warm execution environment would. stdout and stderr belong to the function alone
 * (what CloudWatch Logs would receive); results go to the results file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';

export type Invocation = {
  readonly name: string;
  readonly requestId: string;
  readonly event: unknown;
  /** A streamed answer's client that takes the first write (the prelude and first bytes), then nothing more. */
  readonly clientStops?: boolean;
};

export type Plan = {
  readonly codeDir: string;
  /** The template's `Handler`, e.g. `index.handler`. */
  readonly handler: string;
  readonly functionName: string;
  readonly memorySize: number;
  readonly timeoutSeconds: number;
  readonly invocations: readonly Invocation[];
};

export type Outcome =
  | { readonly name: string; readonly outcome: 'returned'; readonly value: unknown }
  | { readonly name: string; readonly outcome: 'streamed'; readonly prelude: unknown; readonly body: string; readonly error?: string }
  | { readonly name: string; readonly outcome: 'threw'; readonly error: string }
  | { readonly name: string; readonly outcome: 'timed out' };

const streamingMark = Symbol.for('aws.lambda.runtime.handler.streaming');
const delimiter = Buffer.alloc(8);

/** The response stream the runtime hands a streaming handler: the prelude goes first, then the body. */
class ResponseStream extends Writable {
  readonly chunks: Buffer[] = [];
  contentType: string | undefined;
  _onBeforeFirstWrite?: (write: (data: string | Uint8Array) => void) => void;
  private started = false;

  /** `clientStops`: the first write is never acknowledged and nothing more is buffered, as for a client that stopped reading. */
  private readonly clientStops: boolean;
  constructor(clientStops = false) {
    super(clientStops ? { highWaterMark: 1 } : {});
    this.clientStops = clientStops;
  }

  setContentType(contentType: string) {
    this.contentType = contentType;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void) {
    if (!this.started) {
      this.started = true;
      this._onBeforeFirstWrite?.((data) => this.chunks.push(Buffer.from(data)));
    }
    this.chunks.push(chunk);
    if (!this.clientStops) callback();
  }

  /** The prelude (status and headers) and the body, split where the runtime's delimiter is. */
  decode(): { prelude: unknown; body: Buffer } {
    const all = Buffer.concat(this.chunks);
    const at = all.indexOf(delimiter);
    if (this.contentType !== 'application/vnd.awslambda.http-integration-response' || at < 0) return { prelude: undefined, body: all };
    return { prelude: JSON.parse(all.subarray(0, at).toString('utf8')), body: all.subarray(at + delimiter.length) };
  }
}

const installAwsLambdaGlobal = () => {
  const global = globalThis as { awslambda?: Record<string, unknown> };
  global.awslambda ??= {};
  global.awslambda.streamifyResponse = (handler: object) => Object.assign(handler, { [streamingMark]: 'response' });
  global.awslambda.HttpResponseStream = {
    from(stream: ResponseStream, prelude: unknown) {
      stream.setContentType('application/vnd.awslambda.http-integration-response');
      const metadata = JSON.stringify(prelude);
      stream._onBeforeFirstWrite = (write) => {
        write(metadata);
        write(new Uint8Array(8));
      };
      return stream;
    },
  };
};

const context = (plan: Plan, requestId: string, deadline: number) => ({
  awsRequestId: requestId,
  callbackWaitsForEmptyEventLoop: true,
  functionName: plan.functionName,
  functionVersion: '1',
  invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${plan.functionName}:live`,
  memoryLimitInMB: String(plan.memorySize),
  logGroupName: `/aws/lambda/${plan.functionName}`,
  logStreamName: 'contract',
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
});

const run = async (plan: Plan): Promise<Outcome[]> => {
  installAwsLambdaGlobal();
  const [file, exportName] = plan.handler.split('.') as [string, string];
  const module = await import(pathToFileURL(join(plan.codeDir, `${file}.mjs`)).href);
  const handler = module[exportName] as ((...args: unknown[]) => Promise<unknown>) & { [streamingMark]?: string };
  const outcomes: Outcome[] = [];
  for (const { name, requestId, event, clientStops } of plan.invocations) {
    const timeoutMs = plan.timeoutSeconds * 1000;
    const ctx = context(plan, requestId, Date.now() + timeoutMs);
    const stream = new ResponseStream(clientStops);
    const call = handler[streamingMark] === 'response' ? handler(event, stream, ctx) : handler(event, ctx);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timed out'>((resolve) => (timer = setTimeout(() => resolve('timed out'), timeoutMs)));
    try {
      const value = await Promise.race([call, timedOut]);
      if (value === 'timed out') outcomes.push({ name, outcome: 'timed out' });
      else if (handler[streamingMark] === 'response') {
        const { prelude, body } = stream.decode();
        outcomes.push({ name, outcome: 'streamed', prelude, body: body.toString('base64') });
      } else outcomes.push({ name, outcome: 'returned', value });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (handler[streamingMark] === 'response') {
        const { prelude, body } = stream.decode();
        outcomes.push({ name, outcome: 'streamed', prelude, body: body.toString('base64'), error: message });
      } else outcomes.push({ name, outcome: 'threw', error: message });
    } finally {
      clearTimeout(timer);
    }
  }
  return outcomes;
};

if (import.meta.main) {
  const [planFile, resultsFile] = process.argv.slice(2) as [string, string];
  const plan: Plan = JSON.parse(readFileSync(planFile, 'utf8'));
  writeFileSync(resultsFile, JSON.stringify(await run(plan)));
  // Like a frozen execution environment: nothing left running keeps the process alive.
  process.exit(0);
}
