/**
 * What a running `npm start` tells the other local tools: where its DynamoDB and tables are.
 * `npm start` writes it once it listens and removes it when it stops; `npm run keys` reads it
 * when no flag or variable names a target, so it finds the stack however it was started.
 */
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { tableName } from '../../shared/config.ts';
import { callerPath } from './start-checks.ts';

const repoRoot = resolve(import.meta.dirname, '../..');

export const localStateSchema = z.object({
  pid: z.number().int().positive(),
  apiUrl: z.url(),
  dynamoDbEndpoint: z.url(),
  ordersTable: tableName,
  apiKeysTable: tableName,
  authorizerCacheTtlSeconds: z.number().int().min(0),
  startedAt: z.string(),
});
export type LocalState = z.infer<typeof localStateSchema>;

/** `.local/npm-start.json` in the repository (git-ignored), or LOCAL_STATE_FILE. */
export const localStateFile = (env: NodeJS.ProcessEnv = process.env): string =>
  env.LOCAL_STATE_FILE ? callerPath(env.LOCAL_STATE_FILE, env) : resolve(repoRoot, '.local/npm-start.json');

export const writeLocalState = (state: LocalState, file: string = localStateFile()): void => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`);
};

/** Removes the file if it still describes this process (a later `npm start` may have replaced it). */
export const removeLocalState = (file: string = localStateFile(), pid: number = process.pid): void => {
  try {
    if (localStateSchema.parse(JSON.parse(readFileSync(file, 'utf8'))).pid === pid) unlinkSync(file);
  } catch {
    // Absent or unreadable: nothing of ours to remove.
  }
};

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * The running `npm start`, if the file names one. A file left by a process that is gone (killed
 * with SIGKILL, machine restarted) is ignored, as is one that is not ours to read.
 */
export const readLocalState = (file: string = localStateFile()): LocalState | undefined => {
  let content: unknown;
  try {
    content = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  const parsed = localStateSchema.safeParse(content);
  return parsed.success && isRunning(parsed.data.pid) ? parsed.data : undefined;
};
