/**
 * Releases that answer wrong without failing, built from the real handler sources with one
 * deliberate fault each, bundled as the stack bundles the functions (ESM, SDK inside). The pre-traffic
 * hook (test/shipped/pre-traffic-hook.test.ts) and `npm run smoke` against the local service
 * (test/http/smoke.test.ts, `withBrokenBuild`) must stop each of them, naming the check. A fault
 * whose source text is gone fails loudly, so the test never silently checks an unbroken build.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build, type Plugin } from 'esbuild';
import type { Registry } from '../../infra/registry.ts';
import { repoRoot, tempDir } from './cdk.ts';

/** One edit of a source file: `replace` (which must be there) by `with`. */
type Edit = { readonly file: string; readonly replace: string; readonly with: string };
/** A fault: the handler it breaks, its first edit, and any more (each file's edits applied in turn). */
type Fault = Edit & { readonly handlerFile: string; readonly also?: readonly Edit[] };

export const faults = {
  // Refuses every key with exactly "Unauthorized": 401 for every client, no 5xx, no error metric.
  authorizer: {
    handlerFile: 'functions/authorizer/handler.ts',
    file: 'functions/authorizer/handler.ts',
    replace: "if (key === undefined) throw new Refused('unknown_or_revoked_key');",
    with: "if (true) throw new Refused('unknown_or_revoked_key');",
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
  // Ignores the v2 cursor once it has checked it: every page is the first page again, with a cursor.
  pagedCursorIgnored: {
    handlerFile: 'functions/list-orders-paged/handler.ts',
    file: 'functions/list-orders-paged/handler.ts',
    replace: 'const startKey = await cursors.open(query);',
    with: 'const startKey = (await cursors.open(query)) && undefined;',
  },
  // Ignores every v2 filter: a status is read from the whole table, and no order is left out.
  pagedFilterIgnored: {
    handlerFile: 'functions/list-orders-paged/handler.ts',
    file: 'functions/list-orders-paged/page-read.ts',
    replace: "if (query.status !== undefined) return { kind: 'status', status: query.status };",
    with: '',
    also: [
      {
        file: 'functions/list-orders-paged/list-query.ts',
        replace: 'if (query.status !== undefined && order.status !== query.status) return false;',
        with: 'return true;',
      },
    ],
  },
  // Cancels a shipped order as if it were pending: 204, and the order is written cancelled.
  cancelShipped: {
    handlerFile: 'functions/cancel-order/handler.ts',
    file: 'functions/cancel-order/cancel-update.ts',
    replace: "ConditionExpression: '#status = :pending',",
    with: "ConditionExpression: '#status = :pending OR (attribute_exists(#status) AND #status <> :cancelled)',",
  },
  // Lists the first order of every Scan page twice: 200, valid orders, one id twice.
  listOrderTwice: {
    handlerFile: 'functions/list-orders/handler.ts',
    file: 'functions/list-orders/list-stream.ts',
    replace: "yield* emit((count === 0 ? '' : ',') + page.value.map(toJson).join(','));",
    with: "yield* emit((count === 0 ? '' : ',') + [...page.value, page.value[0]!].map(toJson).join(','));",
  },
  // Drops the Scan's ExclusiveStartKey: each segment repeats its first page, so a list never ends and repeats ids.
  listRepeatsFirstPage: {
    handlerFile: 'functions/list-orders/handler.ts',
    file: 'functions/list-orders/orders-scan.ts',
    replace: 'ExclusiveStartKey: startKey,',
    with: 'ExclusiveStartKey: undefined,',
  },
} as const satisfies Record<string, Fault>;

/** Applies the fault's edits as esbuild loads their files, and records each edit it applied in `applied`. */
const inject = (fault: Fault, applied: Set<Edit>): Plugin => ({
  name: 'inject-fault',
  setup(pluginBuild) {
    const edits = [fault, ...(fault.also ?? [])];
    const targets = new Set(edits.map(({ file }) => resolve(repoRoot, file)));
    pluginBuild.onLoad({ filter: /\.ts$/ }, (args) => {
      if (!targets.has(args.path)) return undefined;
      let source = readFileSync(args.path, 'utf8');
      for (const edit of edits.filter(({ file }) => resolve(repoRoot, file) === args.path)) {
        if (!source.includes(edit.replace)) throw new Error(`${edit.file} no longer contains "${edit.replace}": update the fault`);
        source = source.replace(edit.replace, edit.with);
        applied.add(edit);
      }
      return { contents: source, loader: 'ts' };
    });
  },
});

/** The broken build's code directory (index.mjs exporting `handler`, as the template's `index.handler` expects). */
export const brokenBuild = async (fault: Fault): Promise<string> => {
  const dir = tempDir('store-orders-broken-');
  const applied = new Set<Edit>();
  await build({
    entryPoints: [resolve(repoRoot, fault.handlerFile)],
    outfile: join(dir, 'index.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    mainFields: ['module', 'main'],
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    plugins: [inject(fault, applied)],
    logLevel: 'error',
  });
  // A file the handler no longer bundles (moved, renamed) would leave the build unbroken.
  for (const edit of [fault, ...(fault.also ?? [])])
    if (!applied.has(edit)) throw new Error(`${edit.file} is not part of ${fault.handlerFile}'s bundle: update the fault`);
  return dir;
};

/** `registry` with the function `name` served by a broken build's bundle instead of its own handler (the local service loads it). */
export const withBrokenBuild = (registry: Registry, name: string, codeDir: string): Registry => {
  const broken = <Contract extends { name: string; function: { handlerFile: string } }>(contract: Contract): Contract =>
    contract.name === name ? { ...contract, function: { ...contract.function, handlerFile: join(codeDir, 'index.mjs') } } : contract;
  return { authorizer: broken(registry.authorizer), operations: registry.operations.map(broken) };
};
