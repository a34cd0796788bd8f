/**
 * `@store-orders/client` cannot be published to the public npm registry by accident: this team
 * does not own the `@store-orders` scope there, and whoever published that name first would
 * receive every store's API key. The package is marked private (npm refuses to publish it); stores
 * install the tarball `npm pack` makes (test/client/package.test.ts) or, once the team runs one, a
 * private registry mapped to the scope (docs/api.md). Real npm, against a registry on this machine
 * that records what reaches it (a publish is a PUT).
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const clientDir = resolve(import.meta.dirname, '../../client');
const publicRegistries = ['registry.npmjs.org', 'registry.yarnpkg.com', 'registry.npmjs.com'];

describe('publishing @store-orders/client', () => {
  const requests: string[] = [];
  const registry = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    // npm 11 first asks whether the version exists (GET of the name): "not found" answers it at once.
    res.writeHead(req.method === 'GET' ? 404 : 500).end();
  });
  let registryUrl: string;
  beforeAll(async () => {
    registry.listen(0, '127.0.0.1');
    await once(registry, 'listening');
    registryUrl = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
  });
  afterAll(() => registry.close());

  /** `npm <args>` in `cwd`, publishing to the recording registry with a token for it; never throws. */
  const npm = (args: string[], cwd: string) => {
    const host = registryUrl.replace(/^http:/, '');
    const registryArgs = ['--registry', registryUrl, `--${host}:_authToken=test-token-not-a-secret`];
    return new Promise<{ code: number | null; output: string }>((done) =>
      execFile('npm', [...args, ...registryArgs], { cwd, timeout: 60_000 }, (error, stdout, stderr) =>
        done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, output: `${stdout}${stderr}` }),
      ),
    );
  };

  // --ignore-scripts: no build is needed to see npm refuse; it refuses before sending anything.
  it('is skipped by npm publish in client/ (a workspace marked private): nothing reaches the registry', async () => {
    const { output } = await npm(['publish', '--ignore-scripts'], clientDir);
    expect(output).toContain('Skipping workspace @store-orders/client, marked as private');
    expect(requests).toEqual([]);
  });

  it('is refused (EPRIVATE) when its packed tarball is published from anywhere else: npm asks about the name, never uploads', async () => {
    const work = await mkdtemp(join(tmpdir(), 'client-publish-'));
    try {
      await npm(['pack', '--ignore-scripts', '--pack-destination', work], clientDir);
      const tarball = (await readdir(work)).find((name) => name.endsWith('.tgz'));
      expect(tarball).toBeDefined();
      const { code, output } = await npm(['publish', join(work, tarball!)], work);
      expect(code, output).not.toBe(0);
      expect(output).toContain('EPRIVATE');
      expect(requests.filter((request) => !request.startsWith('GET '))).toEqual([]);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  it('says private, and names no public registry to publish to', async () => {
    const manifest = JSON.parse(await readFile(resolve(clientDir, 'package.json'), 'utf8')) as {
      private?: boolean;
      publishConfig?: { registry?: string };
    };
    expect(manifest.private).toBe(true);
    // Should the team publish to a registry of its own, `private` gives way to publishConfig.registry: never a public one.
    const target = manifest.publishConfig?.registry;
    if (target !== undefined) expect(publicRegistries).not.toContain(new URL(target).hostname);
  });
});
