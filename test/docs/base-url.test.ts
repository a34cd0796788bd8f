/**
 * One base URL, one meaning: the OpenAPI document's servers are the stage roots (its paths carry
 * their version, /v1/… and /v2/…), and docs/api.md names exactly those servers; every base URL
 * the docs give a client is a server URL followed by /v1, which is what the client library takes.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreOrdersClient } from '../../client/src/index.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');
type Server = { url: string; variables?: Record<string, { default: string }> };
const documented = (JSON.parse(read('docs/openapi.json')) as { servers: Server[] }).servers;
const servers = documented.map((server) => server.url);
/** A server URL with its variables at their defaults (`http://127.0.0.1:{port}` is `http://127.0.0.1:3000`). */
const filled = documented.map((server) => server.url.replace(/\{(\w+)\}/g, (_, name: string) => server.variables![name]!.default));
const urlSpans = (text: string) => [...text.matchAll(/`(https?:\/\/[^`\s]+)`/g)].map((match) => match[1]!);

describe('the base URL in the docs and in the OpenAPI document', () => {
  it('docs/api.md names exactly the document`s servers', () => {
    const paragraph = /^What the document holds:[\s\S]*?(?=\n\n)/m.exec(read('docs/api.md'))![0];
    const named = urlSpans(paragraph);
    expect(new Set(named)).toEqual(new Set(servers));
  });

  it('every base URL the client docs give is a server URL followed by /v1, and the client takes it', () => {
    const bases = ['docs/api.md', 'client/README.md']
      .flatMap((path) => [...read(path).matchAll(/(https?:\/\/[\w.{}:-]+(?:\/[\w{}-]+)*\/v1)\b(?!\/)/g)].map((match) => match[1]!))
      .filter((url) => !url.includes('<'));
    expect(bases.length).toBeGreaterThan(2);
    for (const base of bases) {
      expect(
        [...servers, ...filled].map((server) => `${server}/v1`),
        base,
      ).toContain(base);
      expect(() => new StoreOrdersClient({ baseUrl: base, apiKey: 'k' }), base).not.toThrow();
    }
  });
});
