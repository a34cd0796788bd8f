/**
 * What earlier runs of `npm start` left (docs/developing.md#small-decisions).
 * DynamoDB Local runs in a process group of its own (./dynamodb-local.ts), so that Ctrl-C reaches
 * only the service, which stops it last; a service killed outright (`kill -9`) cannot, and its
 * DynamoDB Local runs on with credentials nobody holds, on its port and its DATA_DIR. The next start
 * finds such orphans among this user's processes and stops them, and refuses a DATA_DIR that a
 * running start's DynamoDB Local still uses: two DynamoDB Locals on one database file would corrupt it.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { launcherClassName } from './dynamodb-local.ts';

/** A DynamoDB Local started by this checkout's launcher, and who started it. */
export type LaunchedDynamoDbLocal = {
  readonly pid: number;
  readonly parentPid: number;
  /** Whether the process that started it is gone (it was killed, and another took its child over). */
  readonly orphaned: boolean;
  /** Its `-dbPath`: undefined when it keeps its data in memory. */
  readonly dataDir: string | undefined;
};

const launcherClasses = resolve(import.meta.dirname, '../../node_modules/.cache/loopback-dynamodb-local');

type Row = { pid: number; parentPid: number; uid: number; args: string };

/** This machine's processes, as `ps` lists them (Linux and macOS alike). */
const processes = (): Row[] => {
  const listed = spawnSync('ps', ['-ww', '-e', '-o', 'pid=,ppid=,uid=,args='], { encoding: 'utf8' });
  if (listed.status !== 0) return [];
  return listed.stdout.split('\n').flatMap((line) => {
    const match = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    return match === null ? [] : [{ pid: Number(match[1]), parentPid: Number(match[2]), uid: Number(match[3]), args: match[4]! }];
  });
};

/**
 * This user's DynamoDB Locals started by this checkout's launcher. One is orphaned when its
 * parent is no Node process any more: npm start (as the tests and the bench) starts it from Node,
 * and a killed parent's children are taken over by init or a subreaper.
 */
export const launchedDynamoDbLocals = (): LaunchedDynamoDbLocal[] => {
  const rows = processes();
  const byPid = new Map(rows.map((row) => [row.pid, row]));
  const uid = process.getuid?.();
  return rows
    .filter((row) => row.uid === uid && row.args.includes(` ${launcherClassName} `) && row.args.includes(launcherClasses))
    .map((row) => ({
      pid: row.pid,
      parentPid: row.parentPid,
      orphaned: !/(^|\/)node(js)?(\s|$)/.test(byPid.get(row.parentPid)?.args ?? ''),
      dataDir: / -dbPath (.+?) -port \d+/.exec(row.args)?.[1],
    }));
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stops a process: SIGTERM, and SIGKILL if it has not gone within 5 s. */
const stop = async (pid: number) => {
  process.kill(pid, 'SIGTERM');
  for (let waited = 0; waited < 5_000 && alive(pid); waited += 100) await sleep(100);
  if (alive(pid)) process.kill(pid, 'SIGKILL');
};

/**
 * Before a start's own DynamoDB Local: stops the orphaned ones (telling which), and throws, naming
 * both processes, when a running start's DynamoDB Local uses `dataDir`.
 */
export const settleEarlierRuns = async (dataDir: string | undefined, log: (line: string) => void = console.log): Promise<void> => {
  const launched = launchedDynamoDbLocals();
  for (const orphan of launched.filter((candidate) => candidate.orphaned)) {
    await stop(orphan.pid);
    log(
      `Stopped DynamoDB Local (pid ${orphan.pid}, ${orphan.dataDir === undefined ? 'in memory' : `data in ${orphan.dataDir}`}): the npm start that ran it was killed`,
    );
  }
  const holder = launched.find((candidate) => !candidate.orphaned && dataDir !== undefined && candidate.dataDir === dataDir);
  if (holder !== undefined)
    throw new Error(
      `DATA_DIR ${dataDir} is in use by DynamoDB Local (pid ${holder.pid}) of another npm start (pid ${holder.parentPid}): ` +
        `stop that one first, or choose another DATA_DIR`,
    );
};
