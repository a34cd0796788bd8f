import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

export type Service = { child: ChildProcess; output: () => string; url?: string; exitCode?: number | null };

/** Runs `npm start`'s entry point as a real process and waits for its listening line (or its exit). */
export const startService = async (env: Record<string, string | undefined>): Promise<Service> => {
  const { DYNAMODB_ENDPOINT, ORDERS_TABLE, API_KEYS_TABLE, PORT, SEED_FILE, STORE_API_KEY, DATA_DIR, ...inherited } = process.env;
  const child = spawn(process.execPath, ['infra/local/start.ts'], {
    env: { ...inherited, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => ({ exitCode: code as number | null }));
  const listening = new Promise<{ url: string }>((resolve) => {
    child.stdout?.on('data', () => {
      const url = /Store Orders API listening on (http:\/\/127\.0\.0\.1:\d+\/v1)\n/.exec(output)?.[1];
      if (url !== undefined) resolve({ url });
    });
  });
  const first = await Promise.race([listening, exited]);
  return { child, output: () => output, ...first };
};

/** Stops the service with a signal and resolves to its exit code. */
export const stopService = async (service: Service, signal: NodeJS.Signals = 'SIGTERM') => {
  const exited = once(service.child, 'exit');
  service.child.kill(signal);
  const [code] = await exited;
  return code as number | null;
};

/** Table names no other test uses. */
export const uniqueTables = (prefix: string) => {
  const suffix = Math.random().toString(36).slice(2, 10);
  return { ORDERS_TABLE: `${prefix}-orders-${suffix}`, API_KEYS_TABLE: `${prefix}-keys-${suffix}` };
};
