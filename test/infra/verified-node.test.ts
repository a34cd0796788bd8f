/**
 * .ci/verified-node, the step that gives the deploy jobs a checksum-verified Node: run against a
 * local copy of a Node.js download directory (file://) signed by a throwaway key, since this
 * machine cannot reach nodejs.org.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, tempDir } from '../lib/cdk.ts';

const dir = tempDir('store-orders-verified-node-');
const gnupgHome = join(dir, 'gnupg');
const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
const archive = `node-${process.version}-linux-${arch}.tar.xz`;
const gpg = (...args: string[]) => execFileSync('gpg', ['--batch', '--quiet', ...args], { env: { ...process.env, GNUPGHOME: gnupgHome } });

/** A dist directory for this Node version: a small archive and SHASUMS256.txt, clear-signed. */
const distribution = (name: string, tamper = false) => {
  const dist = join(dir, name, process.version);
  const tree = join(dir, name, 'tree', `node-${process.version}-linux-${arch}`, 'bin');
  mkdirSync(dist, { recursive: true });
  mkdirSync(tree, { recursive: true });
  writeFileSync(join(tree, 'node'), `#!/bin/sh\necho "${process.version} (the verified build)"\n`, { mode: 0o755 });
  execFileSync('tar', [
    '--create',
    '--xz',
    '--file',
    join(dist, archive),
    '--directory',
    join(dir, name, 'tree'),
    `node-${process.version}-linux-${arch}`,
  ]);
  const sha = execFileSync('sha256sum', [join(dist, archive)], { encoding: 'utf8' }).split(' ')[0];
  writeFileSync(join(dist, 'SHASUMS256.txt'), `${'0'.repeat(64)}  node-${process.version}-darwin-arm64.tar.gz\n${sha}  ${archive}\n`);
  gpg('--yes', '--clearsign', '--output', join(dist, 'SHASUMS256.txt.asc'), join(dist, 'SHASUMS256.txt'));
  if (tamper) appendFileSync(join(dist, archive), 'x');
  return `file://${join(dir, name)}`;
};

const verifiedNode = (distUrl: string, keys: string) => {
  const githubPath = join(dir, `github-path-${Math.random()}`);
  writeFileSync(githubPath, '');
  const runnerTemp = join(dir, `runner-${Math.random()}`);
  mkdirSync(runnerTemp);
  const result = spawnSync('bash', [join(repoRoot, '.ci/verified-node')], {
    encoding: 'utf8',
    env: { ...process.env, NODE_DIST_URL: distUrl, NODE_RELEASE_KEYS: keys, GITHUB_PATH: githubPath, RUNNER_TEMP: runnerTemp },
  });
  return { status: result.status, output: result.stdout + result.stderr, path: readFileSync(githubPath, 'utf8').trim() };
};

describe('.ci/verified-node', () => {
  const throwawayKey = join(dir, 'throwaway.asc');
  beforeAll(() => {
    mkdirSync(gnupgHome, { mode: 0o700 });
    gpg('--passphrase', '', '--quick-gen-key', 'Throwaway Releaser <releaser@example.com>', 'ed25519', 'sign', 'never');
    writeFileSync(throwawayKey, gpg('--armor', '--export'));
  });

  it('puts the build on the PATH when a trusted key signed the checksums and the archive matches them', () => {
    const { status, output, path } = verifiedNode(distribution('good'), throwawayKey);
    expect([status, output]).toEqual([
      0,
      expect.stringContaining(`verified-node: ${process.version} (the verified build), ${archive} sha256`),
    ]);
    expect(execFileSync(join(path, 'node'), { encoding: 'utf8' })).toContain('(the verified build)');
  });

  it('refuses an archive whose checksum is not the signed one, and changes no PATH', () => {
    const { status, output, path } = verifiedNode(distribution('tampered', true), throwawayKey);
    expect(status).not.toBe(0);
    expect(output).toMatch(/FAILED/);
    expect(path).toBe('');
  });

  it("refuses checksums signed by anyone but a Node.js releaser (the project's keyring), and changes no PATH", () => {
    const { status, output, path } = verifiedNode(distribution('impostor'), join(repoRoot, '.ci/nodejs-release-keys.asc'));
    expect(status).not.toBe(0);
    expect(output).toMatch(/public key|Can't check signature|BAD signature/i);
    expect(path).toBe('');
  });
});
