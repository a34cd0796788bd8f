/**
 * The host names the local gateway answers for (docs/decisions/0173-dynamodb-local-answers-only-the-service-that-started-it.md). A web page whose own name an attacker rebinds to 127.0.0.1 is same-origin
 * with the gateway and may send `Authorization`; its requests still carry that name in `Host`, so
 * a request for any other name is refused before anything else is read.
 */

/** One `ALLOWED_HOSTS` entry: a host name (`orders.test`), or a leading dot for a name and all its subdomains (`.orders.test`). */
export const allowedHostPattern = /^\.?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

/** The names the gateway itself is reached by; `npm start` prints the first. */
export const loopbackHostNames = ['127.0.0.1', 'localhost', '[::1]'] as const;

export type HostNames = {
  /** The gateway's own port: the loopback names are accepted with it only. */
  readonly port: number;
  /** Names the developer added (`ALLOWED_HOSTS`), matched on the name alone. */
  readonly allowed: readonly string[];
};

/** A Host value's name (lower case) and port; undefined when it is not `name[:port]` or `[v6]:port`. */
const parseHost = (value: string): { name: string; port: number | undefined } | undefined => {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]\s]+)(?::(\d{1,5}))?$/.exec(value);
  if (match === null) return undefined;
  return { name: match[1]!.toLowerCase(), port: match[2] === undefined ? undefined : Number(match[2]) };
};

/**
 * Whether the gateway answers a request for `host` (its Host header, or the authority of an
 * absolute-form target). The loopback names count on the gateway's own port only (an absent port
 * is 80, RFC 9110 §4.2.1). Added names count on any port, and a leading dot takes in subdomains,
 * as Vite's `server.allowedHosts` and webpack-dev-server's `allowedHosts` match them: a proxy or a
 * tunnel in front of the gateway forwards its own name with its own port.
 */
export const hostAllowed = (host: string, { port, allowed }: HostNames): boolean => {
  const parsed = parseHost(host);
  if (parsed === undefined) return false;
  if ((loopbackHostNames as readonly string[]).includes(parsed.name)) return (parsed.port ?? 80) === port;
  return allowed.some((entry) =>
    entry.startsWith('.') ? parsed.name === entry.slice(1) || parsed.name.endsWith(entry) : parsed.name === entry,
  );
};
