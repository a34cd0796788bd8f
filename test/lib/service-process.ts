import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ApiResponse, request } from './local-api.ts';

/** The local service as a process: `npm start` as a developer types it, or its node entry point directly. */
export type ServiceProcess = {
  readonly child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** The base URL from its listening line; undefined when it exited first. */
  readonly url?: string;
  readonly exitCode?: number | null;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** Where it records itself for `npm run keys` (LOCAL_STATE_FILE): a temporary file per run. */
  readonly stateFile: string;
};

/** Starts `npm start` (or `node infra/local/start.ts`) and waits for its listening line or its exit. */
export const startServiceProcess = async (via: 'npm' | 'node', env: Record<string, string | undefined>): Promise<ServiceProcess> => {
  // Nothing of the test run's own configuration leaks in: only what the test says.
  const {
    DYNAMODB_ENDPOINT,
    ORDERS_TABLE,
    API_KEYS_TABLE,
    PORT,
    SEED_FILE,
    STORE_API_KEY,
    DATA_DIR,
    INIT_CWD,
    LOCAL_STATE_FILE,
    ...inherited
  } = process.env;
  // Each run records itself in a file of its own, never in the repository's .local/.
  const stateFile = join(await mkdtemp(join(tmpdir(), 'state-')), 'npm-start.json');
  const [command, args] = via === 'npm' ? ['npm', ['start', '--silent']] : [process.execPath, ['infra/local/start.ts']];
  const child = spawn(command, args as string[], {
    env: { ...inherited, PORT: '0', LOCAL_STATE_FILE: stateFile, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const listening = new Promise<{ url: string }>((resolve) => {
    child.stdout?.on('data', () => {
      const url = /Store Orders API listening on (http:\/\/127\.0\.0\.1:\d+\/v1)\n/.exec(output)?.[1];
      if (url !== undefined) resolve({ url });
    });
  });
  const first = await Promise.race([listening, exited.then((exitCode) => ({ exitCode }))]);
  return { child, output: () => output, exited, stateFile, ...first };
};

/** Stops the service with a signal and resolves to its exit code. */
export const stopServiceProcess = (service: ServiceProcess, signal: NodeJS.Signals = 'SIGTERM') => {
  service.child.kill(signal);
  return service.exited;
};

/** Table names no other test uses. */
export const uniqueTables = (prefix: string) => {
  const suffix = Math.random().toString(36).slice(2, 10);
  return { ORDERS_TABLE: `${prefix}-orders-${suffix}`, API_KEYS_TABLE: `${prefix}-keys-${suffix}` };
};

/** The process ids of a process's children (Linux /proc). */
export const childPids = (pid: number): number[] => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

export const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export const portAccepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** The service's ERROR log lines for a DynamoDB call stopped at its deadline (shared/dynamo.ts). */
const deadlineErrors = (output: string) =>
  output.split('\n').filter((line) => line.includes('"level":"ERROR"') && /"(TimeoutError|AbortError)"/.test(line)).length;

/**
 * `request` to a service process, sent again (at most 3 times in all) only when its answer was a
 * 5xx that the service logged as a DynamoDB deadline: on a machine running two test suites at
 * once, a starved DynamoDB Local can miss the authorizer's or a handler's 2 s per attempt, and
 * the service then answers as deployed (500 from the authorizer, 503 from a handler). For tests
 * about something else; the deadline answers themselves are test/http/dynamodb-faults.test.ts's.
 * The service must log at ERROR or finer (POWERTOOLS_LOG_LEVEL), or nothing is retried.
 */
export const requestPastDeadlines = async (
  service: ServiceProcess,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<ApiResponse> => {
  for (let attempt = 1; ; attempt++) {
    const before = deadlineErrors(service.output());
    const response = await request(service.url!, method, path, headers).catch((error: unknown) => {
      // A keep-alive connection the service closed after its idle timeout (5 s) while this starved
      // process was about to reuse it: GET and DELETE are idempotent, and a client sends them again
      // on a new connection (RFC 9110 §9.2.2). Anything else fails the test.
      if (attempt < 3 && (error as { cause?: { code?: string } }).cause?.code === 'UND_ERR_SOCKET') return undefined;
      throw error;
    });
    if (response === undefined) continue;
    if (response.status < 500 || attempt === 3 || !(await loggedSince(service, before))) return response;
    console.warn(`${method} ${path} answered ${response.status} after a DynamoDB deadline (a busy machine): sent again`);
  }
};

/**
 * Whether the service logged a deadline error since `before` lines. It writes its log line before
 * its answer (pipes are synchronous on Linux), so the line is already on its way: waiting for it
 * is waiting for this process to read a pipe, bounded only so that a 5xx with no such line (a real
 * failure) is returned as it is.
 */
const loggedSince = async (service: ServiceProcess, before: number) => {
  for (let waited = 0; waited < 10_000; waited += 50) {
    if (deadlineErrors(service.output()) > before) return true;
    await sleep(50);
  }
  return false;
};
