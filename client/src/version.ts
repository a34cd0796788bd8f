/**
 * The package's version, and the `User-Agent` every request carries unless the caller gives its
 * own. A constant in the source, not `package.json` read at run time: the client also runs
 * bundled from its source (the service's synthetic client) and in browsers, where no
 * `package.json` is there to read. test/client/publish.test.ts keeps it equal to package.json's.
 */
export const clientVersion = '0.3.0';

/** `node/<version>` where the runtime says it is Node (Bun and Deno do too); nothing in a browser. */
const runtime = (): string => {
  const node = (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node;
  return typeof node === 'string' ? ` node/${node}` : '';
};

/** `store-orders-client/<version> node/<version>`: the service's logs tell client versions apart by it. */
export const clientUserAgent = `store-orders-client/${clientVersion}${runtime()}`;
