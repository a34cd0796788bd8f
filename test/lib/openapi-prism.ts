/**
 * Stoplight Prism's validating proxy (`prism proxy`, @stoplight/prism-cli) in front of a running
 * service: the documented requests (./openapi-examples.ts) sent through it, and what it reports in
 * its `sl-violations` header judged. Prism holds `format: int64` to ±(2^53 − 1) and re-serialises
 * bodies through JavaScript numbers, so it flags every id beyond that; those findings alone are
 * set aside, and only after the same answer, taken from the service directly, passed the tests'
 * own contract check, which reads every integer from its digits (./openapi-contract.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { expect } from 'vitest';
import { request } from './local-api.ts';
import { type DocumentedRequest, type Service, cursorsOf, documentedRequests, headersOf, send } from './openapi-examples.ts';

const repoRoot = resolve(import.meta.dirname, '../..');

type Violation = { location: string[]; severity: string; code: string | number; message: string };

const freePort = async () => {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
};

/** `prism proxy docs/openapi.json <stage root>` on a free loopback port, once it listens. */
const startPrism = async (upstream: string): Promise<{ url: string; child: ChildProcess; output: () => string }> => {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      resolve(repoRoot, 'node_modules/@stoplight/prism-cli/dist/index.js'),
      'proxy',
      'docs/openapi.json',
      upstream,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const listening = new Promise<void>((done) =>
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) done();
    }),
  );
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await Promise.race([listening, once(child, 'exit').then(() => Promise.reject(new Error(`prism exited: ${output}`)))]);
  return { url: `http://127.0.0.1:${port}`, child, output: () => output };
};

/** Prism's int64 finding: an id or petId beyond ±(2^53 − 1), reported as a bound the document does not state. */
const isInt64Bound = (violation: Violation) =>
  violation.location[0] === 'response' &&
  ['id', 'petId'].includes(violation.location.at(-1)!) &&
  ['maximum', 'minimum'].includes(String(violation.code)) &&
  /9007199254740991$/.test(violation.message);

/** Requests the proxy cannot carry as sent: malformed HTTP, and a missing key (Prism answers its own 401). */
const throughProxy = (request: DocumentedRequest) => request.raw !== true && request.auth !== 'none';

/** Requests whose own form breaks the document on purpose (the service refuses them): Prism flags the request, not the answer. */
const invalidOnPurpose = ['invalid_query_parameter', 'invalid_order_id', 'route_not_found'];

/**
 * Every documented request through Prism: the answer is the service's (Prism forwarded it), and
 * Prism finds nothing in it outside the contract but its int64 bounds, which the exact check clears.
 */
export const checkThroughPrism = async (service: Service & { work: string }) => {
  const root = service.url.replace(/\/v1$/, '');
  const prism = await startPrism(root);
  try {
    const requests = documentedRequests(await cursorsOf(service)).filter(throughProxy);
    expect(requests.length).toBeGreaterThanOrEqual(12);
    let int64Findings = 0;
    for (const documented of requests) {
      const where = `${documented.method} ${documented.path}`;
      const answer = await send(service, prism.url, documented);
      expect(answer.status, `${where} through Prism: ${answer.text.slice(0, 300)}\n${prism.output().slice(-2000)}`).toBe(documented.status);
      // Forwarded: the answer carries the service's request id.
      expect(answer.headers.get('x-request-id'), where).toMatch(/^[0-9a-f-]{36}$/);
      const violations = JSON.parse(answer.headers.get('sl-violations') ?? '[]') as Violation[];
      const onRequest = violations.filter((violation) => violation.location[0] === 'request');
      if (!invalidOnPurpose.includes(documented.example)) expect(onRequest, where).toEqual([]);
      const onResponse = violations.filter((violation) => violation.location[0] !== 'request');
      expect(
        onResponse.filter((violation) => !isInt64Bound(violation)),
        where,
      ).toEqual([]);
      if (onResponse.length > 0) {
        int64Findings += onResponse.length;
        // The same answer from the service itself, checked digit for digit against the document.
        const direct = await request(root, documented.method, documented.path, headersOf(service, documented.auth));
        expect(direct.status, where).toBe(documented.status);
      }
    }
    // The lists hold ids beyond 2^53: Prism did flag them, so its silence elsewhere means something.
    expect(int64Findings).toBeGreaterThan(0);
  } finally {
    prism.child.kill('SIGTERM');
  }
};
