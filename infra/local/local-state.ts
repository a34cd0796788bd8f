/**
 * What a running `npm start` tells the other local tools: where its DynamoDB and tables are.
 * `npm start` writes it once it listens and removes it when it stops; `npm run keys` reads it
 * when no flag or variable names a target, so it finds the stack however it was started.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
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
  /** The credentials the DynamoDB Local this start runs answers to (none when DYNAMODB_ENDPOINT named another). */
  dynamoDbCredentials: z.object({ accessKeyId: z.string().min(1), secretAccessKey: z.string().min(1) }).optional(),
  authorizerCacheTtlSeconds: z.number().int().min(0),
  startedAt: z.string(),
});
export type LocalState = z.infer<typeof localStateSchema>;

/** `.local/npm-start.json` in the repository (git-ignored), or LOCAL_STATE_FILE. */
export const localStateFile = (env: NodeJS.ProcessEnv = process.env): string =>
  env.LOCAL_STATE_FILE ? callerPath(env.LOCAL_STATE_FILE, env) : resolve(repoRoot, '.local/npm-start.json');

/**
 * Writes the state where only its owner can read it (it may hold DynamoDB Local's credentials):
 * a folder it creates is 0700, and the file is written 0600 under a name of its own (`wx` refuses
 * one that exists, a symbolic link included), then renamed over the old one, whatever that one's mode was.
 */
export const writeLocalState = (state: LocalState, file: string = localStateFile()): void => {
  const dir = dirname(file);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const written = `${file}.${process.pid}.tmp`;
  rmSync(written, { force: true });
  writeFileSync(written, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(written, file);
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
