import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localStateSchema } from '../../infra/local/local-state.ts';
import { childPids, type ServiceProcess, startServiceProcess, stopServiceProcess } from '../lib/service-process.ts';

// `npm start` on a machine other people use: another user of the machine (here `nobody`, over
// loopback) gets nothing from its DynamoDB Local, and finds its credentials in no command line,
// no environment and no file they can read.

/**
 * Runs a command as the unprivileged `nobody`, with nothing of this process's environment but
 * PATH (another user has none of its credentials): through setpriv as root, or sudo's where this
 * user may use it without a password (a hosted CI runner). Undefined where neither is possible.
 */
const asOtherUser = (command: string, args: readonly string[]): { status: number | null; stdout: string; stderr: string } | undefined => {
  const setpriv = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', command, ...args];
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  if (process.getuid?.() === 0) return spawnSync(setpriv[0]!, setpriv.slice(1), { env, encoding: 'utf8', cwd: '/' });
  if (spawnSync('sudo', ['-n', 'true']).status === 0) return spawnSync('sudo', ['-n', ...setpriv], { env, encoding: 'utf8', cwd: '/' });
  return undefined;
};
const otherUserAvailable = asOtherUser('true', []) !== undefined;
/** Why the other-user tests cannot run here; in CI (.ci/run runs as root) that is a failure, not a skip. */
const skipReason = 'needs root or passwordless sudo to run a command as the user nobody (setpriv)';
if (!otherUserAvailable && process.env.CI) throw new Error(`CI must run the other-user tests: ${skipReason}`);

/** A DynamoDB JSON call with curl, signed (SigV4) with `user` (`id:secret`), or unsigned; resolves to its status and body. */
const curlArgs = (endpoint: string, target: string, body: object, user?: string) => [
  '-q',
  '-s',
  '-w',
  '\n%{http_code}',
  ...(user === undefined ? [] : ['--aws-sigv4', 'aws:amz:us-east-1:dynamodb', '--user', user]),
  '-H',
  'Content-Type: application/x-amz-json-1.0',
  '-H',
  `X-Amz-Target: DynamoDB_20120810.${target}`,
  '--data',
  JSON.stringify(body),
  `${endpoint}/`,
];
const parseCurl = (stdout: string) => {
  const at = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(at + 1)), body: stdout.slice(0, at) };
};

describe('npm start against another user of the machine', () => {
  let service: ServiceProcess;
  let endpoint: string;
  let credentials: { accessKeyId: string; secretAccessKey: string };
  let dataDir: string;
  beforeAll(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'shared-machine-')), 'data');
    // Its own DynamoDB Local, as a developer's npm start runs it, with its data kept in a folder.
    service = await startServiceProcess('node', { DATA_DIR: dataDir, POWERTOOLS_LOG_LEVEL: 'ERROR' });
    expect(service.url, service.output()).toBeDefined();
    endpoint = /DynamoDB Local on (http:\/\/127\.0\.0\.1:\d+)/.exec(service.output())![1]!;
    const state = localStateSchema.parse(JSON.parse(readFileSync(service.stateFile, 'utf8')));
    // Read here, checked where used: the other-user tests need none of them.
    credentials = state.dynamoDbCredentials ?? { accessKeyId: 'none-recorded', secretAccessKey: 'none-recorded' };
  });
  afterAll(async () => {
    if (service !== undefined) await stopServiceProcess(service);
  });

  describe.runIf(otherUserAvailable)(`as nobody (${skipReason})`, () => {
    const asNobody = (args: readonly string[]) => {
      const result = asOtherUser('curl', args)!;
      expect(result.status, result.stderr).toBe(0);
      return parseCurl(result.stdout);
    };

    it('cannot read the key records: a Scan of the keys table gets 403, signed as every client used to sign or not at all', () => {
      for (const user of ['local:local', `${credentials.accessKeyId}:guessed`, undefined]) {
        const scan = asNobody(curlArgs(endpoint, 'Scan', { TableName: 'api-keys' }, user));
        expect(scan.status, `${user}: ${scan.body}`).toBe(403);
        expect(scan.body).not.toContain('keyHash');
      }
    });

    it('cannot write a key record of its own (an unlimited key), which therefore does not exist', () => {
      const keyHash = randomUUID();
      const put = asNobody(
        curlArgs(
          endpoint,
          'PutItem',
          { TableName: 'api-keys', Item: { keyHash: { S: keyHash }, keyId: { S: 'key_forged' }, tier: { S: 'unlimited' } } },
          'local:local',
        ),
      );
      expect(put.status, put.body).toBe(403);
      const get = spawnSync(
        'curl',
        curlArgs(
          endpoint,
          'GetItem',
          { TableName: 'api-keys', Key: { keyHash: { S: keyHash } } },
          `${credentials.accessKeyId}:${credentials.secretAccessKey}`,
        ),
        { encoding: 'utf8' },
      );
      const read = parseCurl(get.stdout);
      expect(read.status, read.body).toBe(200);
      expect(JSON.parse(read.body)).toEqual({});
    });

    it('cannot read the file npm start records its credentials in, nor the environment of its processes', () => {
      const node = service.child.pid!;
      const java = childPids(node)[0]!;
      for (const file of [service.stateFile, `/proc/${node}/environ`, `/proc/${java}/environ`, `/proc/${java}/fd/0`]) {
        const read = asOtherUser('cat', [file])!;
        expect(read.status, `${file} was readable by nobody`).not.toBe(0);
        expect(read.stdout).not.toContain(credentials.secretAccessKey);
      }
    });
  });

  it('answers the credentials it was started with, signed by an independent client (curl), and its key tool through the state file', () => {
    const scan = parseCurl(
      spawnSync(
        'curl',
        curlArgs(endpoint, 'Scan', { TableName: 'api-keys' }, `${credentials.accessKeyId}:${credentials.secretAccessKey}`),
        {
          encoding: 'utf8',
        },
      ).stdout,
    );
    expect(scan.status, scan.body).toBe(200);
    expect(scan.body).toContain('keyHash');
    const { AWS_ACCESS_KEY_ID: _id, AWS_SECRET_ACCESS_KEY: _secret, ...shell } = process.env;
    const keys = spawnSync(process.execPath, ['infra/ops/keys.ts', 'list'], {
      env: { ...shell, LOCAL_STATE_FILE: service.stateFile },
      encoding: 'utf8',
    });
    expect(keys.status, keys.stderr).toBe(0);
    expect(keys.stdout).toContain('local (generated)');
  });

  it('puts its credentials in no command line and no environment of any process, and in no file others can read', () => {
    const { secretAccessKey } = credentials;
    expect(secretAccessKey).not.toBe('none-recorded');
    for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      for (const part of ['cmdline', 'environ']) {
        let text: string;
        try {
          text = readFileSync(`/proc/${pid}/${part}`, 'latin1');
        } catch {
          continue; // gone meanwhile
        }
        // This test process (and its vitest parent) may hold them: it read the state file.
        if (part === 'environ' && (Number(pid) === process.pid || Number(pid) === process.ppid)) continue;
        expect(text.includes(secretAccessKey), `/proc/${pid}/${part}`).toBe(false);
      }
    }
    // The state file holds them, for the key tool: its owner's alone, in a folder of its owner's.
    expect(readFileSync(service.stateFile, 'utf8')).toContain(secretAccessKey);
    expect(statSync(service.stateFile).mode & 0o077).toBe(0);
    expect(statSync(dirname(service.stateFile)).mode & 0o077).toBe(0);
    // DynamoDB Local's own files keep no trace of them (DATA_DIR: the tables, key hashes).
    for (const name of readdirSync(dataDir))
      expect(readFileSync(join(dataDir, name), 'latin1').includes(secretAccessKey), name).toBe(false);
  });
});
