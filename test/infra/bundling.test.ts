import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { StoreFunction } from '../../infra/cdk/store-function.ts';
import { logicalId, synthApp } from '../lib/cdk.ts';

/** Real esbuild bundling (local, no Docker) of the staging stack: the other infra tests skip it. */
describe('the function bundles', () => {
  const { stack, template } = synthApp({ bundle: ['StoreOrders-staging'] });
  const s = stack('staging');
  const t = template('staging');
  const assembly = s.node.root as unknown as { outdir: string };
  const bundleOf = (id: string) => {
    const fn = (s.node.findChild(id) as StoreFunction).function;
    const key: string = t.toJSON().Resources[logicalId(s, fn)].Properties.Code.S3Key;
    return join(assembly.outdir, `asset.${key.replace(/\.zip$/, '')}`);
  };
  const ids = ['ListOrdersFunction', 'CancelOrderFunction', 'AuthorizerFunction'];

  it.each(ids)('%s is a minified ESM bundle with a source map, require() made available, and the AWS SDK inside', (id) => {
    const dir = bundleOf(id);
    expect(existsSync(join(dir, 'index.mjs'))).toBe(true);
    expect(existsSync(join(dir, 'index.mjs.map'))).toBe(true);
    const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
    expect(code.startsWith("import { createRequire as storeOrdersCreateRequire } from 'node:module';")).toBe(true);
    expect(code).toContain('//# sourceMappingURL=index.mjs.map');
    // Minified: long lines, not the sources' formatting.
    expect(code.length / code.split('\n').length).toBeGreaterThan(1000);
    // Bundled, not imported from the runtime's copy of the SDK.
    expect(code).not.toMatch(/from\s*["']@aws-sdk\//);
    expect(code).not.toMatch(/import\(["']@aws-sdk\//);
    expect(code).toContain('DynamoDB');
    const map = JSON.parse(readFileSync(join(dir, 'index.mjs.map'), 'utf8'));
    expect(map.sourcesContent).toBeUndefined();
    expect(map.sources.some((source: string) => source.includes('@aws-sdk/client-dynamodb'))).toBe(true);
  });

  it('runs on Node.js 24: the authorizer bundle loads and refuses a malformed header without calling DynamoDB', () => {
    const url = pathToFileURL(join(bundleOf('AuthorizerFunction'), 'index.mjs')).href;
    const script = `
      const { handler } = await import(${JSON.stringify(url)});
      const context = { functionName: 'authorizer', awsRequestId: 'r', invokedFunctionArn: 'arn:aws:lambda:us-east-1:1:function:a', memoryLimitInMB: '512', functionVersion: '1', getRemainingTimeInMillis: () => 1000 };
      const event = { type: 'TOKEN', authorizationToken: 'Basic nope', methodArn: 'arn:aws:execute-api:us-east-1:1:api/staging/GET/v1/store/orders' };
      try { await handler(event, context); console.log('allowed'); } catch (error) { console.log(error.message); }
    `;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: {
        PATH: process.env.PATH,
        API_KEYS_TABLE: 'api-keys',
        AWS_REGION: 'us-east-1',
        POWERTOOLS_LOG_LEVEL: 'SILENT',
        POWERTOOLS_METRICS_DISABLED: 'true',
      },
      encoding: 'utf8',
    });
    expect(output.trim()).toBe('Unauthorized');
  });
});
