/**
 * A stand-in for the Lambda Node.js runtime, as much of it as the functions touch: the `awslambda`
 * globals for response streaming, the response stream a streaming handler writes to (its HTTP
 * prelude first, as the runtime interface client writes it), the context object, and the
 * function's timeout. The local gateway (./gateway.ts) runs the handler modules on it in its own
 * process; the shipped-bundle tests run each bundle on it in a process of its own
 * (test/lib/lambda-runtime.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { InvokeStoreBase } from '@aws/lambda-invoke-store';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';

/** The mark the runtime looks for on a handler wrapped by `awslambda.streamifyResponse`. */
const streamingMark = Symbol.for('aws.lambda.runtime.handler.streaming');

export type ProxyResult = {
  statusCode: number;
  headers?: Record<string, unknown>;
  multiValueHeaders?: Record<string, unknown[]>;
  body?: string;
  isBase64Encoded?: boolean;
};
export type StreamingHandler = ((event: unknown, stream: Writable, context: Context) => Promise<void>) & { [streamingMark]?: string };
export type BufferedHandler = (event: unknown, context: Context) => Promise<ProxyResult>;
export type LambdaHandler = StreamingHandler | BufferedHandler;
export type Authorizer = (event: APIGatewayTokenAuthorizerEvent, context: Context) => Promise<APIGatewayAuthorizerResult>;

export const isStreamingHandler = (handler: unknown): handler is StreamingHandler =>
  (handler as StreamingHandler)[streamingMark] === 'response';

/** The content type HttpResponseStream.from() sets: an HTTP prelude (JSON), 8 NUL bytes, then the body. */
export const preludeContentType = 'application/vnd.awslambda.http-integration-response';
export const preludeDelimiter = Buffer.alloc(8);

/**
 * The stream a streaming handler writes to. As the runtime interface client's: HttpResponseStream.from()
 * sets its content type and a prelude, which goes out before the first byte of the body (or at the
 * end, when no body byte is written). What becomes of the bytes is the subclass's `deliver`.
 */
export abstract class LambdaResponseStream extends Writable {
  contentType: string | undefined;
  _onBeforeFirstWrite?: (write: (data: string | Uint8Array) => void) => void;
  private started = false;

  setContentType(contentType: string) {
    this.contentType = contentType;
  }

  /** The bytes of one write, the prelude in front of the first; `done` once they are passed on. */
  protected abstract deliver(bytes: Buffer, done: (error?: Error | null) => void): void;
  /** The end of the response, after the last `deliver`. */
  protected abstract finish(done: (error?: Error | null) => void): void;

  private withPrelude(chunk: Buffer): Buffer {
    if (this.started) return chunk;
    this.started = true;
    const prelude: Buffer[] = [];
    this._onBeforeFirstWrite?.((data) => prelude.push(Buffer.from(data)));
    return prelude.length === 0 ? chunk : Buffer.concat([...prelude, chunk]);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void) {
    this.deliver(this.withPrelude(chunk), callback);
  }

  override _final(callback: (error?: Error | null) => void) {
    if (this.started) return this.finish(callback);
    this.deliver(this.withPrelude(Buffer.alloc(0)), (error) => (error ? callback(error) : this.finish(callback)));
  }
}

/** The prelude (status and headers) and the body of a response's bytes, split where the runtime's delimiter is. */
export const decodeStreamed = (contentType: string | undefined, bytes: Buffer): { prelude: unknown; body: Buffer } => {
  const at = bytes.indexOf(preludeDelimiter);
  if (contentType !== preludeContentType || at < 0) return { prelude: undefined, body: bytes };
  return { prelude: JSON.parse(bytes.subarray(0, at).toString('utf8')), body: bytes.subarray(at + preludeDelimiter.length) };
};

/**
 * The globals the Lambda Node.js runtime provides for response streaming, which middy's
 * streaming mode calls when a handler module is loaded: install before importing handlers.
 */
export const installLambdaStreamingGlobals = () => {
  // Other libraries (the SDK's invoke store) may already have created `awslambda`: add to it.
  const global = globalThis as { awslambda?: Record<string, unknown> };
  global.awslambda ??= {};
  const lambda = global.awslambda;
  lambda.streamifyResponse ??= (handler: object) => Object.assign(handler, { [streamingMark]: 'response' });
  lambda.HttpResponseStream ??= {
    from(stream: LambdaResponseStream, prelude: unknown) {
      stream.setContentType(preludeContentType);
      // JSON.stringify escapes NUL: the prelude itself never holds the delimiter.
      const metadata = JSON.stringify(prelude);
      stream._onBeforeFirstWrite = (write) => {
        write(metadata);
        write(new Uint8Array(preludeDelimiter.length));
      };
      return stream;
    },
  };
};

type InvocationContext = Record<string | symbol, unknown>;

/**
 * Lambda's per-invocation store (npm `@aws/lambda-invoke-store`, which the runtime interface client
 * fills at the start of each invocation) for invocations that share one process: a context of its
 * own for each, through AsyncLocalStorage, as the runtime keeps it on Lambda Managed Instances.
 */
class ConcurrentInvokeStore extends InvokeStoreBase {
  private readonly contexts = new AsyncLocalStorage<InvocationContext>();
  getContext() {
    return this.contexts.getStore();
  }
  hasContext() {
    return this.contexts.getStore() !== undefined;
  }
  get<T = unknown>(key: string | symbol): T | undefined {
    return this.contexts.getStore()?.[key] as T | undefined;
  }
  set<T = unknown>(key: string | symbol, value: T) {
    if (this.isProtectedKey(key)) throw new Error(`Cannot modify protected Lambda context field: ${String(key)}`);
    const context = this.contexts.getStore();
    if (context === undefined) throw new Error('No invocation context');
    context[key] = value;
  }
  run<T>(context: InvocationContext, fn: () => T): T {
    return this.contexts.run(context, fn);
  }
}

const lambdaGlobal = () => {
  const global = globalThis as unknown as { awslambda?: { InvokeStore?: InvokeStoreBase } };
  global.awslambda ??= {};
  return global.awslambda;
};

/**
 * Runs the invocations of this process each in a context of its own, as Lambda's Node.js runtime
 * does where one execution environment serves several at once (Managed Instances): the runtime
 * sets AWS_LAMBDA_MAX_CONCURRENCY and backs its InvokeStore with AsyncLocalStorage, and Powertools
 * (its Logger's keys, log level and Lambda context; shared/dynamo-calls.ts's record too) then keeps
 * its state per invocation instead of per process. The local gateway runs many invocations in its
 * process; without this, one request's log lines carried another's request id and function name.
 * Call it before any invocation; an InvokeStore the SDK made meanwhile (one context for the whole
 * process) is replaced.
 */
export const runInvocationsConcurrently = (maxConcurrency: number) => {
  installInvokeStore();
  process.env.AWS_LAMBDA_MAX_CONCURRENCY = String(maxConcurrency);
};

/**
 * The InvokeStore alone, without declaring concurrency: for a process that may have inherited
 * AWS_LAMBDA_MAX_CONCURRENCY, where Powertools' Logger and Metrics refuse to be constructed
 * without a store (npm start, before any shared module loads: ./service-name.ts).
 */
export const installInvokeStore = () => {
  const lambda = lambdaGlobal();
  if (!(lambda.InvokeStore instanceof ConcurrentInvokeStore)) lambda.InvokeStore = new ConcurrentInvokeStore();
};

/** An invocation run in its own InvokeStore context where invocations share the process (runInvocationsConcurrently), else as it is. */
const inInvocationContext = <Result>(requestId: string, invoke: () => Promise<Result>): Promise<Result> => {
  const store = lambdaGlobal().InvokeStore;
  if (!(store instanceof ConcurrentInvokeStore)) return invoke();
  return store.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: requestId }, invoke);
};

/** One function as the stand-in runs it: the settings Lambda gives it (from infra/function-settings.ts or the template). */
export type FunctionIdentity = {
  readonly name: string;
  readonly memorySize: number;
  readonly timeoutSeconds: number;
};

/** Where an invocation says it runs: the local gateway's defaults, or a deployed-looking version and alias. */
export type InvocationSite = {
  readonly functionVersion: string;
  readonly invokedFunctionArn: string;
  readonly logStreamName: string;
};

const localSite = (fn: FunctionIdentity): InvocationSite => ({
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${fn.name}`,
  logStreamName: 'local',
});

/** The context object of one invocation, its remaining time counting down to `deadline`. */
export const lambdaContext = (
  fn: FunctionIdentity,
  { requestId = randomUUID(), deadline, site = localSite(fn) }: { requestId?: string; deadline: number; site?: InvocationSite },
): Context => ({
  awsRequestId: requestId,
  callbackWaitsForEmptyEventLoop: true,
  functionName: fn.name,
  ...site,
  memoryLimitInMB: String(fn.memorySize),
  logGroupName: `/aws/lambda/${fn.name}`,
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
});

/** Lambda's error for an invocation that outlived its function's timeout. */
export class TaskTimedOut extends Error {}

/**
 * Runs one invocation as Lambda would: with a context whose remaining time counts down from the
 * function's timeout, failing with Lambda's "Task timed out" error when it runs out (the
 * handler itself cannot be stopped here, as Lambda would stop it; its answer is then ignored).
 */
export const invokeWithTimeout = async <Result>(
  fn: FunctionIdentity,
  call: (context: Context) => Promise<Result>,
  { requestId, site }: { requestId?: string; site?: InvocationSite } = {},
): Promise<Result> => {
  const timeoutMs = fn.timeoutSeconds * 1000;
  const context = lambdaContext(fn, {
    deadline: Date.now() + timeoutMs,
    ...(requestId === undefined ? {} : { requestId }),
    ...(site === undefined ? {} : { site }),
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new TaskTimedOut(`Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds`)), timeoutMs);
  });
  try {
    return await inInvocationContext(context.awsRequestId, () => Promise.race([call(context), timedOut]));
  } finally {
    clearTimeout(timer);
  }
};
