/**
 * `@store-orders/client` is ready to publish (client/README.md, "Releasing it"): public metadata
 * (name, version, repository, license, files, exports with types, engines, provenance), its own
 * changelog with the version being released, `npm publish --dry-run` clean (real npm, against a
 * registry on this machine that records what reaches it: a dry run uploads nothing), and packing
 * it needs nothing of the service: client/ copied alone, with only its own devDependencies,
 * builds and packs.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientUserAgent, clientVersion } from '../../client/src/index.ts';
import { packClientAlone } from '../lib/client.ts';

const clientDir = resolve(import.meta.dirname, '../../client');
const manifest = JSON.parse(await readFile(join(clientDir, 'package.json'), 'utf8')) as Record<string, unknown> & {
  version: string;
  files: string[];
  exports: Record<string, unknown>;
  repository: { type: string; url: string; directory: string };
  publishConfig: Record<string, unknown>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, unknown>;
};

/** `npm <args>` in `cwd` (never throws): its exit code and output. */
const npm = (args: string[], cwd: string, env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; output: string }>((done) =>
    execFile('npm', args, { cwd, timeout: 300_000, env: { ...process.env, ...env } }, (error, stdout, stderr) =>
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, output: `${stdout}${stderr}` }),
    ),
  );

describe('the package metadata', () => {
  it('is public and complete: name, semver version, MIT, the repository folder, files, ESM exports with types, engines', () => {
    expect(manifest).not.toHaveProperty('private');
    expect(manifest).toMatchObject({ name: '@store-orders/client', license: 'MIT', type: 'module', engines: { node: '>=20' } });
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(manifest.repository).toMatchObject({ type: 'git', directory: 'client' });
    expect(manifest.repository.url).toMatch(/^git\+https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/);
    expect(manifest.files).toEqual(expect.arrayContaining(['dist/', 'README.md', 'CHANGELOG.md', 'LICENSE']));
    expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    expect(manifest.dependencies).toBeUndefined();
  });

  it('carries its version in its source too (the User-Agent of every request, bundled or not)', () => {
    expect(clientVersion).toBe(manifest.version);
    expect(clientUserAgent.startsWith(`store-orders-client/${manifest.version} `)).toBe(true);
  });

  it('declares what its bin needs (openapi-typescript, TypeScript 5) as optional peers: nothing a client-only install fetches', () => {
    expect(manifest.peerDependencies).toEqual({
      'openapi-typescript': expect.stringMatching(/^\^7\./),
      typescript: expect.stringMatching(/^\^5\./),
    });
    expect(manifest.peerDependenciesMeta).toEqual({ 'openapi-typescript': { optional: true }, typescript: { optional: true } });
  });

  it('publishes with provenance and public access, to the registry the scope is mapped to (no registry pinned here)', () => {
    expect(manifest.publishConfig).toEqual({ access: 'public', provenance: true });
  });

  it('has a changelog entry for the version it carries, and a semver policy', async () => {
    const changelog = await readFile(join(clientDir, 'CHANGELOG.md'), 'utf8');
    expect(changelog).toContain(`## [${manifest.version}]`);
    expect(changelog).toMatch(/semantic versioning/i);
    expect(await readFile(join(clientDir, 'README.md'), 'utf8')).toMatch(/## Releasing it/);
  });
});

describe('npm publish --dry-run', () => {
  const requests: string[] = [];
  const registry = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(req.method === 'GET' ? 404 : 500).end();
  });
  let registryArgs: string[];
  beforeAll(async () => {
    registry.listen(0, '127.0.0.1');
    await once(registry, 'listening');
    const url = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
    registryArgs = ['--registry', url, `--${url.replace(/^http:/, '')}:_authToken=test-token-not-a-secret`];
  });
  afterAll(() => registry.close());

  it('is clean in client/: the built package, no warning or correction, nothing uploaded', async () => {
    const { code, output } = await npm(['publish', '--dry-run', ...registryArgs], clientDir);
    expect(code, output).toBe(0);
    expect(output).toContain(`+ @store-orders/client@${manifest.version}`);
    expect(output).not.toMatch(/npm (warn|error)/i);
    for (const file of ['dist/index.js', 'dist/index.d.ts', 'CHANGELOG.md', 'README.md', 'LICENSE', 'bin/openapi-types.mjs'])
      expect(output).toContain(file);
    expect(output).not.toMatch(/\bsrc\//);
    expect(requests.filter((request) => !request.startsWith('GET '))).toEqual([]);
  });
});

describe('packing client/ alone', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'client-alone-'));
  });
  afterAll(() => rm(work, { recursive: true, force: true }));

  it('needs only the client`s own devDependencies: copied out of the repository, it installs them, builds and packs', async () => {
    const { tarball, installed } = await packClientAlone(work);
    // What it installed is its own devDependencies and nothing of the service's.
    expect(installed.sort()).toEqual(Object.keys(manifest.devDependencies ?? {}).sort());
    expect(tarball).toBe(join(work, `store-orders-client-${manifest.version}.tgz`));
    expect(await readdir(work)).toContain(`store-orders-client-${manifest.version}.tgz`);
  });
});
