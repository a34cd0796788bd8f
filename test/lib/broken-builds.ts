/**
 * Releases that answer wrong without failing, built from the real handler sources with one
 * deliberate fault each, bundled as the stack bundles the functions (ESM, SDK inside). The pre-traffic
 * hook must stop each of them. A fault whose source text is gone fails loudly, so the test never
 * silently checks an unbroken build.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { repoRoot, tempDir } from './cdk.ts';

type Fault = { readonly handlerFile: string; readonly file: string; readonly replace: string; readonly with: string };

export const faults = {
  // Refuses every key with exactly "Unauthorized": 401 for every client, no 5xx, no error metric.
  authorizer: {
    handlerFile: 'functions/authorizer/handler.ts',
    file: 'functions/authorizer/handler.ts',
    replace: 'if (key === undefined) {',
    with: 'if (true) {',
  },
  // Answers 200 with [] whatever the table holds.
  listOrders: {
    handlerFile: 'functions/list-orders/handler.ts',
    file: 'functions/list-orders/list-stream.ts',
    replace: 'if (page.value.length === 0) continue;',
    with: 'continue;',
  },
  // Answers 204 without cancelling anything.
  cancelOrder: {
    handlerFile: 'functions/cancel-order/handler.ts',
    file: 'functions/cancel-order/handler.ts',
    replace: 'const result = await cancelOrder(orders, orderId, { deadline: callDeadline(context) });',
    with: "const result = { outcome: 'already_cancelled' as const } as Awaited<ReturnType<typeof cancelOrder>>; void callDeadline;",
  },
  // Answers 409 order_not_cancellable for a pending order (and cancels nothing): only 4xx, no error metric.
  cancelPendingConflict: {
    handlerFile: 'functions/cancel-order/handler.ts',
    file: 'functions/cancel-order/handler.ts',
    replace: 'const result = await cancelOrder(orders, orderId, { deadline: callDeadline(context) });',
    with: "const result = { outcome: 'not_cancellable' as const, status: 'pending' } as Awaited<ReturnType<typeof cancelOrder>>; void callDeadline;",
  },
  // Answers every page after the first 400 invalid_cursor: only 4xx, no error metric.
  secondPageInvalid: {
    handlerFile: 'functions/list-orders-paged/handler.ts',
    file: 'functions/list-orders-paged/cursor-keys.ts',
    replace: 'if (query.cursor === undefined) return undefined;',
    with: "if (query.cursor === undefined) return undefined; throw apiError('invalid_cursor');",
  },
  // Its DynamoDB client points at a closed port (a leaked local endpoint, a wrong region): every call
  // fails to connect and the cancel answers 503 service_unavailable with Retry-After, a documented refusal.
  cancelUnavailable: {
    handlerFile: 'functions/cancel-order/handler.ts',
    file: 'functions/cancel-order/handler.ts',
    replace: 'createDocumentClient({ endpoint: config.DYNAMODB_ENDPOINT })',
    with: "createDocumentClient({ endpoint: 'http://127.0.0.1:9' })",
  },
  // Finds the key's list slots always full: every list answers 429 too_many_requests with Retry-After.
  listLeaseNeverFree: {
    handlerFile: 'functions/list-orders/handler.ts',
    file: 'functions/list-orders/list-leases.ts',
    replace: 'for (let slot = 0; slot < slots; slot++) {',
    with: 'for (let slot = slots; slot < slots; slot++) {',
  },
  // Never gives its list lease back: each list answers, and leaves one of the key's slots held until it expires.
  listLeaseNeverReleased: {
    handlerFile: 'functions/list-orders/handler.ts',
    file: 'functions/list-orders/handler.ts',
    replace: 'if (lease === undefined) return;',
    with: 'if (lease === undefined || lease !== undefined) return;',
  },
  // Drops the Scan's ExclusiveStartKey: each segment repeats its first page, so a list never ends and repeats ids.
  listRepeatsFirstPage: {
    handlerFile: 'functions/list-orders/handler.ts',
    file: 'functions/list-orders/orders-scan.ts',
    replace: 'ExclusiveStartKey: startKey,',
    with: 'ExclusiveStartKey: undefined,',
  },
} as const satisfies Record<string, Fault>;

const inject = (fault: Fault): Plugin => ({
  name: 'inject-fault',
  setup(pluginBuild) {
    const target = resolve(repoRoot, fault.file);
    pluginBuild.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path !== target) return undefined;
      const source = readFileSync(target, 'utf8');
      if (!source.includes(fault.replace)) throw new Error(`${fault.file} no longer contains "${fault.replace}": update the fault`);
      return { contents: source.replace(fault.replace, fault.with), loader: 'ts' };
    });
  },
});

/** The broken build's code directory (index.mjs exporting `handler`, as the template's `index.handler` expects). */
export const brokenBuild = async (fault: Fault): Promise<string> => {
  const dir = tempDir('store-orders-broken-');
  await build({
    entryPoints: [resolve(repoRoot, fault.handlerFile)],
    outfile: join(dir, 'index.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    mainFields: ['module', 'main'],
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    plugins: [inject(fault)],
    logLevel: 'error',
  });
  return dir;
};
