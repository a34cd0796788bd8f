/** Helpers for the tests of the client package (test/client/). */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { cp, readdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const clientDir = resolve(import.meta.dirname, '../../client');

/** Every item of an async iterable, in order. */
export const readAll = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
};

/** A fetch that records the status of every answer, so a test sees the retries a call made. */
export const recordingFetch = () => {
  const statuses: number[] = [];
  const fetcher: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    return response;
  };
  return { statuses, fetch: fetcher };
};

/** A handler of the test's own HTTP server: what the "service" answers. */
export type Handler = (request: IncomingMessage, response: ServerResponse, url: URL) => void;

/**
 * A tiny HTTP server on loopback that answers with `handler` (changeable per test) and records
 * every request it gets (`seen`): the service a client test talks to, or a server elsewhere.
 */
export const testServer = async () => {
  const seen: { method: string; url: URL; headers: IncomingMessage['headers'] }[] = [];
  const state: { handler: Handler } = { handler: (_request, response) => response.writeHead(500).end() };
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url!, 'http://localhost');
    seen.push({ method: request.method!, url, headers: request.headers });
    state.handler(request, response, url);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    baseUrl: `${origin}/v1`,
    seen,
    set handler(handler: Handler) {
      state.handler = handler;
    },
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
};

/** A JSON answer with a request id. */
export const json = (response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'Content-Type': 'application/json', 'X-Request-Id': 'req-1', ...headers });
  response.end(body);
};

/**
 * client/ copied alone to `work/client` (no node_modules, no dist), its own devDependencies
 * installed and packed: the tarball, as anyone with only that folder would make it.
 */
export const packClientAlone = async (work: string): Promise<{ tarball: string; folder: string; installed: string[] }> => {
  const folder = join(work, 'client');
  await cp(clientDir, folder, { recursive: true, filter: (path) => !/[/\\](node_modules|dist)([/\\]|$)|\.tgz$/.test(path) });
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: folder });
  const installed = (await readdir(join(folder, 'node_modules'))).filter((name) => !name.startsWith('.'));
  const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: folder });
  return { tarball: join(work, stdout.trim().split('\n').at(-1)!), folder, installed };
};
