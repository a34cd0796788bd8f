/**
 * Loaded into the service by `npm run load` (`node --expose-gc --import ./test/perf/memory-probe.ts
 * infra/local/start.ts`): answers `{ type: 'memory' }` on the IPC channel with the process's memory
 * after a full garbage collection, so that rounds compare live memory, not garbage not yet collected.
 */
process.channel?.unref();
process.on('message', (message: { type?: string }) => {
  if (message.type !== 'memory') return;
  (globalThis as { gc?: () => void }).gc?.();
  const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
  process.send?.({ type: 'memory', rss, heapUsed, heapTotal, external });
});
