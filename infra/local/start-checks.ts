/**
 * Checks `npm start` makes before it starts anything (DynamoDB Local, tables, the gateway), so
 * a setting that cannot work costs nothing and its message names the setting to change.
 */
import { once } from 'node:events';
import { constants } from 'node:fs';
import { access, chmod, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * The directory the user ran the command in. npm runs scripts from the package root and
 * records the caller's directory in INIT_CWD, so `DATA_DIR=data npm start` run from a
 * subfolder means that subfolder's `data`.
 */
export const callerDirectory = (env: NodeJS.ProcessEnv = process.env): string => env.INIT_CWD || process.cwd();

/** A path as the user meant it: relative paths resolve against the caller's directory. */
export const callerPath = (path: string, env: NodeJS.ProcessEnv = process.env): string =>
  isAbsolute(path) ? path : resolve(callerDirectory(env), path);

/** The message for a gateway port that is taken, here or when the gateway itself listens. */
export const portInUseMessage = (port: number) =>
  `port ${port} on 127.0.0.1 is already in use (another npm start?). Stop what listens there, or choose another port ` +
  `with the PORT variable, e.g. \`PORT=${port === 3000 ? 3001 : 3000} npm start\` (PORT=0 picks a free one).`;

/**
 * Takes `port` for the gateway until `release()`, throwing a message naming the port and PORT
 * when it is in use. Held, not only checked: DynamoDB Local starts in between (seconds), and a
 * port left free that long may be taken by any process's outgoing connection.
 */
export const reservePort = async (port: number): Promise<{ release(): Promise<void> }> => {
  if (port === 0) return { release: async () => undefined };
  const server = createServer();
  server.listen(port, '127.0.0.1');
  try {
    await once(server, 'listening');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new Error(portInUseMessage(port), { cause: error });
    throw new Error(`PORT ${port} cannot be used on 127.0.0.1 (${code ?? String(error)})`, { cause: error });
  }
  // Nothing connects to it: the gateway is not there yet. The process exits if this is all that is left.
  server.unref();
  return {
    release: async () => {
      server.close();
      await once(server, 'close');
    },
  };
};

/**
 * Resolves DATA_DIR against the caller's directory and creates it. DynamoDB Local runs with a
 * working directory of its own (inside its npm package) and refuses a folder that does not
 * exist, so it only ever gets an existing, absolute path. Returns that path.
 */
/**
 * DATA_DIR holds key hashes (unsalted SHA-256: a weak key can be guessed offline), usage
 * identifiers and orders: only its owner may enter it (0700), and what it already holds (a
 * database from an earlier run) is made the owner's alone (0600). DynamoDB Local writes its files
 * there with umask 077 (./dynamodb-local.ts).
 */
const makePrivate = async (path: string) => {
  await chmod(path, 0o700);
  for (const entry of await readdir(path, { withFileTypes: true })) {
    if (entry.isFile()) await chmod(join(path, entry.name), 0o600);
  }
};

export const prepareDataDir = async (dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<string> => {
  const path = callerPath(dataDir, env);
  const existing = await stat(path).catch(() => undefined);
  if (existing !== undefined && !existing.isDirectory()) throw new Error(`DATA_DIR ${path} is not a folder; point DATA_DIR at a folder`);
  try {
    await mkdir(path, { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    const reason = code === 'ENOTDIR' || code === 'EEXIST' ? 'a part of the path is a file' : code;
    throw new Error(`DATA_DIR ${path} cannot be created (${reason}); point DATA_DIR at a folder you can write to`, { cause: error });
  }
  await access(path, constants.W_OK).catch((error: unknown) => {
    throw new Error(`DATA_DIR ${path} is not writable; point DATA_DIR at a folder you can write to`, { cause: error });
  });
  await makePrivate(path);
  return path;
};

/** Variables whose value is a secret: the local API key, and AWS credentials should a developer keep them there. */
const secretVariables = ['STORE_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'];

/**
 * `.env` holding a secret must be the user's alone: mode 0600 (nothing for group or others) and
 * owned by the user (docs/developing.md#small-decisions). Node reads it
 * (`node --env-file-if-exists=.env`, npm start's script, from the folder npm runs scripts in) before
 * any of npm start's code runs, so the check runs first thing, before any setting is used or
 * anything started; `cp .env.example .env` makes a file every user may read.
 */
export const checkEnvFile = async (path: string = resolve(process.cwd(), '.env')): Promise<void> => {
  const found = await stat(path).catch(() => undefined);
  if (found === undefined || !found.isFile()) return;
  const text = await readFile(path, 'utf8').catch(() => '');
  const held = secretVariables.filter((name) => new RegExp(`^[ \\t]*(export[ \\t]+)?${name}[ \\t]*=[ \\t]*[^\\s#]`, 'm').test(text));
  if (held.length === 0) return;
  const mode = (found.mode & 0o777).toString(8).padStart(4, '0');
  const ours = found.uid === process.getuid?.();
  if (ours && (found.mode & 0o077) === 0) return;
  throw new Error(
    `${path} holds ${held.join(' and ')} and ${ours ? `other users may read it (mode ${mode})` : 'belongs to another user'}: ` +
      `make it yours alone (\`chmod 600 ${path}\`${ours ? '' : ', as its owner'}) or take the secret out of it`,
  );
};
