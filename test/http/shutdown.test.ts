import { get } from 'node:http';
import type { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../../infra/local/gateway.ts';
import { type LambdaHandler } from '../../infra/local/lambda-runtime.ts';
import { installLambdaStreamingGlobals } from '../../infra/local/lambda-runtime.ts';
import type { Route } from '../../shared/routes.ts';
import { portAccepts } from '../lib/service-process.ts';

// The gateway's drain, with handlers whose timing the test controls (no database involved).
// Stopping `npm start` as a process is tested in start.test.ts, beside its other process tests
// (run one after the other there: each starts a DynamoDB Local that prefers port 8000).

const testRoute = (operation: string, streaming: boolean): Route => ({
  operation,
  method: 'GET',
  path: `/test/${operation}`,
  streaming,
  summary: 'test-only',
  stability: 'experimental',
});
const slow = testRoute('slow', false);
const endless = testRoute('endless', true);
const lambdaGlobals = () =>
  (
    globalThis as unknown as {
      awslambda: { streamifyResponse: (f: unknown) => unknown; HttpResponseStream: { from: (s: Writable, m: unknown) => Writable } };
    }
  ).awslambda;

/** Resolved each time the slow handler starts: the test's signal that a request is in flight. */
let slowStarted = Promise.withResolvers<void>();

/** Answers after 600 ms. */
const slowHandler = async () => {
  slowStarted.resolve();
  await sleep(600);
  return { statusCode: 200, headers: { 'Content-Type': 'text/plain' }, body: 'finished' };
};

/** Streams a JSON array that never ends, a number every 20 ms, until its client is gone. */
const endlessHandler = async (_event: unknown, stream: Writable) => {
  const out = lambdaGlobals().HttpResponseStream.from(stream, { statusCode: 200, headers: { 'Content-Type': 'application/json' } });
  out.on('error', () => undefined); // its client was cut off: nothing more to do
  out.write('[0');
  for (let i = 1; !out.destroyed && !out.writableEnded; i++) {
    out.write(`,${i}`);
    await sleep(20);
  }
};

const startTestGateway = async () => {
  installLambdaStreamingGlobals();
  const allow = async (): Promise<APIGatewayAuthorizerResult> => ({
    principalId: 'test',
    policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: '*' }] },
  });
  const fn = <Handler>(name: string, handler: Handler) => ({ name, handler, memorySize: 128, timeoutSeconds: 60 });
  return startGateway({
    port: 0,
    routes: [slow, endless],
    functions: new Map([
      [slow, fn('slow', slowHandler as LambdaHandler)],
      [endless, fn('endless', lambdaGlobals().streamifyResponse(endlessHandler) as LambdaHandler)],
    ]),
    authorizer: fn('authorizer', allow),
    authorizerCacheTtlSeconds: 0,
  });
};
const testAuth = { Authorization: 'Bearer test-key-0123456789' };

describe('closing the local gateway', () => {
  it('lets a request in flight finish with its answer, and takes no new connection meanwhile', async () => {
    const gateway = await startTestGateway();
    slowStarted = Promise.withResolvers<void>();
    const answer = fetch(`${gateway.url}/test/slow`, { headers: testAuth });
    await slowStarted.promise; // the handler is running now
    const closed = gateway.close({ drainMs: 5_000 });
    expect(await portAccepts(gateway.port)).toBe(false);
    const response = await answer;
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('finished');
    await closed;
  });

  it('cuts a list still streaming at the drain bound, so that its client never gets a complete-looking array', async () => {
    const gateway = await startTestGateway();
    const streaming = Promise.withResolvers<void>();
    const outcome = new Promise<{ text: string; ended: 'complete' | 'cut' }>((resolve) => {
      let text = '';
      get(`${gateway.url}/test/endless`, { headers: testAuth }, (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (text.startsWith('[0,1')) streaming.resolve();
        });
        res.on('end', () => resolve({ text, ended: 'complete' }));
        res.on('error', () => resolve({ text, ended: 'cut' }));
      }).on('error', () => resolve({ text, ended: 'cut' }));
    });
    await streaming.promise;
    const startedAt = Date.now();
    await gateway.close({ drainMs: 300 });
    // A "not hung" bound, generous for a busy machine: the stream never ends by itself, so only the cut ends it.
    expect(Date.now() - startedAt).toBeLessThan(30_000);
    const { text, ended } = await outcome;
    expect(ended).toBe('cut');
    expect(text.startsWith('[0,1')).toBe(true);
    expect(text.endsWith(']')).toBe(false);
  });
});
