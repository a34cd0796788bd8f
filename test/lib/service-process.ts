import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
