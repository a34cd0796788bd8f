/**
 * One function's bundle on the Lambda runtime stand-in (infra/local/lambda-runtime.ts, shared
 * with the local gateway), in a process of its own: run as
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
import { pathToFileURL } from 'node:url';
import {
  type BufferedHandler,
  decodeStreamed,
  installLambdaStreamingGlobals,
  invokeWithTimeout,
  isStreamingHandler,
  type LambdaHandler,
  LambdaResponseStream,
  TaskTimedOut,
} from '../../infra/local/lambda-runtime.ts';

export type Invocation = {
  readonly name: string;
  readonly requestId: string;
  readonly event: unknown;
  /** A streamed answer's client that takes the first write (the prelude and first bytes), then nothing more. */
  readonly clientStops?: boolean;
  /** A streamed answer whose client left before the function began: the response stream is already destroyed. */
  readonly clientGone?: boolean;
  /** A streamed answer's client that takes this many bytes per second (each write acknowledged once it would have been read). */
  readonly clientBytesPerSecond?: number;
  /**
   * A streamed answer's client that leaves once it has this many bytes (the prelude included), seen by
   * the function: the response stream is destroyed with a connection reset, as the runtime interface
   * client's request to Lambda is when Lambda's side of it fails. (A client that leaves unseen is one
   * whose writes go on being acknowledged: from the function's side, an ordinary client.)
   */
  readonly clientLeavesAfterBytes?: number;
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

/** The response stream a streaming handler writes to, kept whole: its prelude, then its body. */
class CollectedStream extends LambdaResponseStream {
  readonly chunks: Buffer[] = [];
  /** `clientStops`: the first write is never acknowledged and nothing more is buffered, as for a client that stopped reading. */
  private readonly clientStops: boolean;
  private readonly bytesPerSecond: number | undefined;
  private readonly leavesAfterBytes: number;
  private received = 0;
  constructor({ clientStops = false, clientBytesPerSecond, clientLeavesAfterBytes = Infinity }: Partial<Invocation> = {}) {
    super(clientStops ? { highWaterMark: 1 } : {});
    this.clientStops = clientStops;
    this.bytesPerSecond = clientBytesPerSecond;
    this.leavesAfterBytes = clientLeavesAfterBytes;
  }
  protected deliver(bytes: Buffer, done: () => void) {
    this.chunks.push(bytes);
    this.received += bytes.length;
    if (this.received >= this.leavesAfterBytes)
      return this.destroy(Object.assign(new Error('the client left: connection reset'), { code: 'ECONNRESET' }));
    if (this.clientStops) return;
    if (this.bytesPerSecond === undefined) done();
    else setTimeout(done, (bytes.length / this.bytesPerSecond) * 1000);
  }
  protected finish(done: () => void) {
    done();
  }
  decode() {
    return decodeStreamed(this.contentType, Buffer.concat(this.chunks));
  }
}

/** As a deployed version behind the `live` alias. */
const site = (plan: Plan) => ({
  functionVersion: '1',
  invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${plan.functionName}:live`,
  logStreamName: 'contract',
});

const run = async (plan: Plan): Promise<Outcome[]> => {
  installLambdaStreamingGlobals();
  const [file, exportName] = plan.handler.split('.') as [string, string];
  const module = await import(pathToFileURL(join(plan.codeDir, `${file}.mjs`)).href);
  const handler = module[exportName] as LambdaHandler;
  const fn = { name: plan.functionName, memorySize: plan.memorySize, timeoutSeconds: plan.timeoutSeconds };
  const outcomes: Outcome[] = [];
  for (const { name, requestId, event, clientGone, ...client } of plan.invocations) {
    const stream = new CollectedStream(client);
    if (clientGone) stream.destroy();
    const streamed = (error?: string): Outcome => {
      const { prelude, body } = stream.decode();
      return { name, outcome: 'streamed', prelude, body: body.toString('base64'), ...(error === undefined ? {} : { error }) };
    };
    try {
      const value = await invokeWithTimeout<unknown>(
        fn,
        (context) => (isStreamingHandler(handler) ? handler(event, stream, context) : (handler as BufferedHandler)(event, context)),
        { requestId, site: site(plan) },
      );
      // As the runtime interface client: a handler that resolved must have ended its stream, unless
      // the stream was closed under it (src/runtime/streaming-invoke-processor.ts).
      if (isStreamingHandler(handler) && !stream.writableFinished && !stream.destroyed) throw new Error('Response stream is not finished.');
      outcomes.push(isStreamingHandler(handler) ? streamed() : { name, outcome: 'returned', value });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof TaskTimedOut) outcomes.push({ name, outcome: 'timed out' });
      else outcomes.push(isStreamingHandler(handler) ? streamed(message) : { name, outcome: 'threw', error: message });
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
