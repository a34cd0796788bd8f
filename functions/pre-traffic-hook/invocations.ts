/**
 * How the pre-traffic hook (functions/pre-traffic-hook/handler.ts) invokes the new versions of a stage's
 * functions directly: a buffered invocation read as a proxy result, a streamed one read as the
 * list's client would, and either retried while the service is busy, all stopped at the run's
 * deadline.
 */
import { constants, gunzipSync } from 'node:zlib';
import { GetAliasCommand, InvokeCommand, InvokeWithResponseStreamCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { liveAliasName } from '../../shared/probes.ts';
import { type Answer, fail, ServiceBusy } from '../../shared/answers.ts';

const lambda = new LambdaClient({});

/** What an invocation needs of the hook's run: `Date.now()` past which no call starts or goes on. */
type Deadline = { readonly deadline: number };

/** An abort signal that fires at the run's deadline. */
export const untilDeadline = (run: Deadline) => AbortSignal.timeout(Math.max(1, run.deadline - Date.now()));

/**
 * The version ARN the function's `live` alias points at (GetAlias: its FunctionVersion, the version
 * it sends all traffic to but a weighted shift's share), or undefined when that is `newVersionArn`
 * itself (a first deploy, or a function this release does not change): nothing to compare with.
 */
export const liveVersionBeside = async (run: Deadline, newVersionArn: string): Promise<string | undefined> => {
  const parts = newVersionArn.split(':');
  const functionArn = parts.slice(0, 7).join(':');
  const alias = await lambda.send(new GetAliasCommand({ FunctionName: functionArn, Name: liveAliasName }), {
    abortSignal: untilDeadline(run),
  });
  if (alias.FunctionVersion === undefined || alias.FunctionVersion === parts[7]) return undefined;
  return `${functionArn}:${alias.FunctionVersion}`;
};

/** A buffered invocation: the function's answer, or the error it threw (Lambda's FunctionError). */
export const invoke = async (run: Deadline, functionArn: string, event: unknown) => {
  const out = await lambda.send(new InvokeCommand({ FunctionName: functionArn, Payload: Buffer.from(JSON.stringify(event)) }), {
    abortSignal: untilDeadline(run),
  });
  const text = Buffer.from(out.Payload ?? new Uint8Array()).toString('utf8');
  return { functionError: out.FunctionError, payload: (text === '' ? null : JSON.parse(text)) as Record<string, unknown> | null };
};

/** A body as the client would read it: gzip undone (a cut stream up to where it was cut), as a client's HTTP stack does. */
const decoded = (headers: Headers, body: Buffer): string =>
  (headers.get('content-encoding') === 'gzip' ? gunzipSync(body, { finishFlush: constants.Z_SYNC_FLUSH }) : body).toString('utf8');

/** A proxy result as the client would receive it (API Gateway decodes a base64 body). */
export const answerOf = (result: Awaited<ReturnType<typeof invoke>>): Answer => {
  if (result.functionError !== undefined)
    fail(`the function failed (${result.functionError}): ${JSON.stringify(result.payload).slice(0, 200)}`);
  const value = result.payload as {
    statusCode?: number;
    headers?: Record<string, string>;
    body?: string;
    isBase64Encoded?: boolean;
  } | null;
  const headers = new Headers(value?.headers ?? {});
  const body = Buffer.from(value?.body ?? '', value?.isBase64Encoded === true ? 'base64' : 'utf8');
  return { status: value?.statusCode ?? 0, headers, body: decoded(headers, body), firstByteMs: 0 };
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
  const headers = new Headers(head.headers ?? {});
  return {
    status: head.statusCode ?? 0,
    headers,
    body: decoded(headers, cut ? body.subarray(0, maxBodyBytes) : body),
    firstByteMs: firstByteMs ?? 0,
    ...(cut ? { cut } : {}),
  };
};

/** Whether an error is Lambda refusing the invocation for want of concurrency (HTTP 429), not the function failing. */
const isThrottle = (error: unknown) =>
  error instanceof Error &&
  (error.name === 'TooManyRequestsException' || (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 429);

/**
 * Why an answer is busy, or undefined when it is not: only the documented refusals, judged as the
 * smoke check judges them (functions/canary/smoke-check.ts), are busy: a 429 too_many_requests or a
 * 503 service_unavailable Error record with Retry-After. Any other 429 or 503 is an error no
 * document promises: the check fails.
 */
export const busyAnswer = (answer: Pick<Answer, 'status' | 'headers' | 'body'>): string | undefined => {
  const code = answer.status === 429 ? 'too_many_requests' : answer.status === 503 ? 'service_unavailable' : undefined;
  if (code === undefined) return undefined;
  const retryAfter = answer.headers.get('retry-after');
  let record: { code?: unknown } | undefined;
  try {
    record = JSON.parse(answer.body) as { code?: unknown };
  } catch {
    record = undefined;
  }
  if (record?.code !== code || retryAfter === null)
    fail(
      `undocumented error: answered ${answer.status} ${retryAfter === null ? 'without Retry-After' : `Retry-After ${retryAfter}`}: ${answer.body.slice(0, 200)}`,
    );
  return `answered ${answer.status} ${code}, Retry-After ${retryAfter}`;
};

/**
 * The same request to the version the function's `live` alias points at, under an identity of its
 * own, and whether its answer is the one the check expects (not busy). Given only when the live
 * version differs from the new one.
 */
export type Baseline<T> = { readonly version: string; readonly attempt: () => Promise<T>; readonly expected: (value: T) => boolean };

/**
 * How many times a busy new version is asked beside the live one (new, live, new, live…) before
 * they are compared: a new version busy in every pair while the live one answered as expected in
 * at least `pairsCompared - 1` fails the check. With busy answers that clients cause falling on
 * both alike, a good new version busy in all 5 while the live one answered in 4 or 5 happens with
 * a chance of at most 0.7 % even if each answer were busy at random, independently of its neighbour
 * (docs/decisions/0170-busy-is-not-wrong.md).
 */
export const pairsCompared = 5;

/** Whether the live version answered as the check expects: not busy, not throttled, not failed. */
const baselineAnswered = async <T>(baseline: Baseline<T>, busyOf: (value: T) => string | undefined) => {
  try {
    const value = await baseline.attempt();
    return busyOf(value) === undefined && baseline.expected(value);
  } catch {
    return false;
  }
};

/**
 * Runs `attempt` until it gives an answer that is not busy: a Lambda throttle, or a documented
 * refusal (busyAnswer), is waited out with backoff (0.25 s doubling to 8 s, with jitter) until the
 * run's deadline, and then the check is BUSY (ServiceBusy), not failed. What the hook judges is the
 * function's answer once it runs, never the service being busy: other clients, the synthetic
 * client and hooks of other deployments share it, with the live version alike. So while the new
 * version is busy, the same request goes to the live version (`baseline`) after each of its first
 * `pairsCompared` tries: a new version busy in every pair beside a live version that answered
 * fails the check; busy only when both are. `liveBaseline` is asked once, at the first busy answer;
 * undefined when the live alias points at the new version already (nothing to compare).
 */
export const retriedWhileBusy = async <T>(
  run: Deadline,
  attempt: () => Promise<T>,
  busyOf: (value: T) => string | undefined,
  liveBaseline?: () => Promise<Baseline<T> | undefined>,
): Promise<T> => {
  let busy: string | undefined;
  let baseline: Baseline<T> | undefined;
  const pairs = { asked: 0, answered: 0 };
  for (let tries = 1; ; tries++) {
    const stillBusy = (): never => {
      const live = baseline === undefined ? '' : `; the live version ${baseline.version} answered ${pairs.answered} of ${pairs.asked}`;
      throw new ServiceBusy(`still busy at the deadline after ${tries} tries (last: ${busy})${live}`);
    };
    try {
      const value = await attempt();
      const reason = busyOf(value);
      if (reason === undefined) return value;
      busy = reason;
    } catch (error) {
      // Stopped at the deadline while the service was still busy: say so, not merely "no answer".
      if (busy !== undefined && Date.now() >= run.deadline) stillBusy();
      if (!isThrottle(error)) throw error;
      busy = 'throttled by Lambda';
    }
    if (tries === 1 && liveBaseline !== undefined) baseline = await liveBaseline();
    if (baseline !== undefined && pairs.asked < pairsCompared && Date.now() < run.deadline) {
      pairs.asked += 1;
      if (await baselineAnswered(baseline, busyOf)) pairs.answered += 1;
      if (pairs.asked === pairsCompared && pairs.answered >= pairsCompared - 1)
        fail(
          `busy in each of ${pairsCompared} tries (last: ${busy}) while the live version ${baseline.version}, asked beside each, answered as expected in ${pairs.answered}`,
        );
    }
    const waitMs = Math.min(8_000, 250 * 2 ** (tries - 1)) * (0.5 + Math.random() / 2);
    if (Date.now() + waitMs >= run.deadline) stillBusy();
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
};
