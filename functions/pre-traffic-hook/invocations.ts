/**
 * How the pre-traffic hook (functions/pre-traffic-hook/handler.ts) invokes the new versions of a stage's
 * functions directly: a buffered invocation read as a proxy result, a streamed one read as the
 * list's client would, and either retried while the service is busy, all stopped at the run's
 * deadline.
 */
import { InvokeCommand, InvokeWithResponseStreamCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { type Answer, fail, ServiceBusy } from '../../shared/answers.ts';

const lambda = new LambdaClient({});

/** What an invocation needs of the hook's run: `Date.now()` past which no call starts or goes on. */
type Deadline = { readonly deadline: number };

/** An abort signal that fires at the run's deadline. */
export const untilDeadline = (run: Deadline) => AbortSignal.timeout(Math.max(1, run.deadline - Date.now()));

/** A buffered invocation: the function's answer, or the error it threw (Lambda's FunctionError). */
export const invoke = async (run: Deadline, functionArn: string, event: unknown) => {
  const out = await lambda.send(new InvokeCommand({ FunctionName: functionArn, Payload: Buffer.from(JSON.stringify(event)) }), {
    abortSignal: untilDeadline(run),
  });
  const text = Buffer.from(out.Payload ?? new Uint8Array()).toString('utf8');
  return { functionError: out.FunctionError, payload: (text === '' ? null : JSON.parse(text)) as Record<string, unknown> | null };
};

/** A proxy result as the client would receive it. */
export const answerOf = (result: Awaited<ReturnType<typeof invoke>>): Answer => {
  if (result.functionError !== undefined)
    fail(`the function failed (${result.functionError}): ${JSON.stringify(result.payload).slice(0, 200)}`);
  const value = result.payload as { statusCode?: number; headers?: Record<string, string>; body?: string } | null;
  return { status: value?.statusCode ?? 0, headers: new Headers(value?.headers ?? {}), body: value?.body ?? '', firstByteMs: 0 };
};

/**
 * A streamed invocation (how API Gateway calls the list): the function writes a JSON prelude
 * (status and headers), eight NUL bytes, then the body, read to its end. Reading stops only once the
 * body holds `maxBodyBytes` (the answer is then `cut`): a version that does not end a probe's list
 * at its bound (shared/probes.ts) cannot make the hook's memory and time grow with the table.
 */
export const invokeStreamed = async (run: Deadline, functionArn: string, event: unknown, maxBodyBytes: number): Promise<Answer> => {
  const started = performance.now();
  const stop = new AbortController();
  const out = await lambda.send(
    new InvokeWithResponseStreamCommand({ FunctionName: functionArn, Payload: Buffer.from(JSON.stringify(event)) }),
    { abortSignal: AbortSignal.any([stop.signal, untilDeadline(run)]) },
  );
  const chunks: Buffer[] = [];
  let firstByteMs: number | undefined;
  let received = 0;
  let prelude: number | undefined;
  try {
    for await (const message of out.EventStream ?? []) {
      if (message.PayloadChunk?.Payload !== undefined) {
        firstByteMs ??= performance.now() - started;
        chunks.push(Buffer.from(message.PayloadChunk.Payload));
        received += message.PayloadChunk.Payload.byteLength;
        // Where the prelude ends (its eight NUL bytes), looked for until found.
        if (prelude === undefined) {
          const at = Buffer.concat(chunks).indexOf(Buffer.alloc(8));
          if (at >= 0) prelude = at;
        }
        if (prelude !== undefined && received - prelude - 8 >= maxBodyBytes) break;
      }
      const complete = message.InvokeComplete;
      if (complete?.ErrorCode !== undefined) fail(`the stream ended with ${complete.ErrorCode}: ${complete.ErrorDetails ?? ''}`);
    }
  } finally {
    stop.abort();
  }
  const all = Buffer.concat(chunks);
  const at = all.indexOf(Buffer.alloc(8));
  if (at < 0) fail(`no HTTP prelude in the streamed answer: ${all.subarray(0, 200).toString('utf8')}`);
  const head = JSON.parse(all.subarray(0, at).toString('utf8')) as { statusCode?: number; headers?: Record<string, string> };
  const body = all.subarray(at + 8);
  const cut = body.byteLength >= maxBodyBytes;
  return {
    status: head.statusCode ?? 0,
    headers: new Headers(head.headers ?? {}),
    body: (cut ? body.subarray(0, maxBodyBytes) : body).toString('utf8'),
    firstByteMs: firstByteMs ?? 0,
    ...(cut ? { cut } : {}),
  };
};

/** Whether an error is Lambda refusing the invocation for want of concurrency (HTTP 429), not the function failing. */
const isThrottle = (error: unknown) =>
  error instanceof Error &&
  (error.name === 'TooManyRequestsException' || (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 429);

/** Answers the API gives when it is busy or briefly unavailable, not wrong: the hook asks again. */
const busyStatuses = new Set([429, 503]);

/**
 * Runs `attempt` until it gives an answer that is not busy: a Lambda throttle, or an answer
 * with status 429 or 503, is waited out with backoff (0.25 s doubling to 8 s, with jitter) until
 * the run's deadline, and then the check is BUSY (ServiceBusy), not failed. What the hook judges is
 * the function's answer once it runs, never the service being busy: other clients, the synthetic
 * client and hooks of other deployments share it.
 */
export const retriedWhileBusy = async <T>(
  run: Deadline,
  attempt: () => Promise<T>,
  statusOf: (value: T) => number | undefined,
): Promise<T> => {
  let busy: string | undefined;
  for (let tries = 1; ; tries++) {
    const stillBusy = (): never => {
      throw new ServiceBusy(`still busy at the deadline after ${tries} tries (last: ${busy})`);
    };
    try {
      const value = await attempt();
      const status = statusOf(value);
      if (status === undefined || !busyStatuses.has(status)) return value;
      busy = `answered ${status}`;
    } catch (error) {
      // Stopped at the deadline while the service was still busy: say so, not merely "no answer".
      if (busy !== undefined && Date.now() >= run.deadline) stillBusy();
      if (!isThrottle(error)) throw error;
      busy = 'throttled by Lambda';
    }
    const waitMs = Math.min(8_000, 250 * 2 ** (tries - 1)) * (0.5 + Math.random() / 2);
    if (Date.now() + waitMs >= run.deadline) stillBusy();
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
};
