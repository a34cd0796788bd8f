import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resourcePath } from '../../shared/routes.ts';
import { routes } from '../../infra/registry.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const installCommand = 'apt-get update && apt-get install -y chromium';

/** Debian's `chromium` (or another Chromium build) on the PATH. */
const chromium = ['chromium', 'chromium-browser', 'google-chrome']
  .flatMap((name) => (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, name)))
  .find((file) => spawnSync(file, ['--version'], { stdio: 'ignore' }).status === 0);

/**
 * The page's DOM after its scripts ran, in a headless Chromium that can resolve no host name:
 * a page that needed a CDN or any other download would not render.
 */
const renderedDom = (browser: string, file: string): string => {
  const result = spawnSync(
    browser,
    [
      '--headless',
      '--no-sandbox', // required as root (CI containers)
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      `--user-data-dir=${mkdtempSync(join(tmpdir(), 'chromium-'))}`,
      '--host-resolver-rules=MAP * ~NOTFOUND',
      // Redoc renders after load: let the page's timers and promises run (virtual time, not a wall-clock wait).
      '--virtual-time-budget=30000',
      '--dump-dom',
      `file://${file}`,
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (result.status !== 0) throw new Error(`chromium exited with ${result.status}: ${result.stderr}`);
  // The inlined document and bundle hold the operation ids too: only rendered elements count.
  return result.stdout.replace(/<script\b[^>]*>[\s\S]*?<\/script>/g, '');
};

describe('npm run docs', () => {
  if (chromium === undefined) {
    // CI must check the page: there a missing browser is a failure, with the fix in its message.
    if (process.env.CI)
      it('needs Chromium to check the page', () => {
        expect.fail(`chromium is not installed: run \`${installCommand}\` (.ci/run does this)`);
      });
    else it.skip(`renders every operation offline (skipped: no chromium on the PATH; ${installCommand})`, () => {});
    return;
  }

  it('builds one HTML page that renders every operation in a browser, offline, from file://', { timeout: 300_000 }, () => {
    const out = join(mkdtempSync(join(tmpdir(), 'api-reference-')), 'api-reference.html');
    const built = spawnSync('npm', ['run', 'docs', '--', out], { cwd: repoRoot, encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    const page = readFileSync(out, 'utf8');
    expect(page).not.toMatch(/<(script|link)\b[^>]*\b(src|href)=/);

    const dom = renderedDom(chromium, out);
    for (const route of routes) {
      expect(dom, `${route.operation} rendered`).toContain(`id="operation/${route.operation}"`);
      // A summary is text, not a pattern: the v2 summary holds parentheses.
      const summary = route.summary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      expect(dom).toMatch(new RegExp(`<h2[^>]*>(<a[^>]*></a>)?${summary}\\s*</h2>`));
    }
    // The server is the stage root; each path carries its version (/v1, /v2).
    expect(dom).toMatch(/http:\/\/127\.0\.0\.1:(3000|\{port\})/);
    for (const route of routes) expect(dom, `${route.operation}'s path shown`).toContain(resourcePath(route));
  });
});
