/**
 * The local gateway's connection cap and each client's share of it (docs/developing.md#small-decisions,
 * docs/decisions/0935-the-local-gateway-plays-the-firewall.md): no key holds more than its
 * share of requests under way, and at the cap a connection that has shown no valid key gives way
 * first, whatever its address; a key's connections go only when every connection holds a key.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Standing } from './address-limits.ts';

type Connection = {
  readonly address: string;
  /** Since when it has waited for a whole request head; undefined while a request is under way. */
  waitingSince: number | undefined;
  /** When its request under way began. */
  startedAt: number;
  /** The key (the authorizer's principal) its last accepted request showed; undefined until one did. */
  key: string | undefined;
  /** Whether the authorizer refused a key it showed, or the firewall (./address-limits.ts) a request of it. */
  refused: boolean;
};

export type ConnectionShares = {
  /** A whole head arrived: the connection has a request under way until its answer is sent. */
  requestStarted(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Counts the request against its key's share (requests under way at once) until its answer is
   * done or its connection gone; false, counting nothing, when the key already holds its share.
   * Its connection has shown a valid key from now on.
   */
  admitKey(res: ServerResponse, key: string): boolean;
  /** The authorizer refused a key this request's connection showed, or the firewall the request. */
  refused(req: IncomingMessage): void;
  /** What the request's connection has shown so far (./address-limits.ts orders authorizations by it). */
  standing(req: IncomingMessage): Standing;
};

/** Connections that have shown no valid key: those waiting for a head first, the longest waiting, then the longest running. */
const keylessVictim = (connections: ReadonlyMap<Socket, Connection>, newcomer: Socket): Socket | undefined => {
  let chosen: [Socket, Connection] | undefined;
  const before = (a: Connection, b: Connection) => {
    if ((a.waitingSince !== undefined) !== (b.waitingSince !== undefined)) return a.waitingSince !== undefined;
    // A connection refused before goes before one that has not been.
    if (a.refused !== b.refused) return a.refused;
    return (a.waitingSince ?? a.startedAt) < (b.waitingSince ?? b.startedAt);
  };
  for (const entry of connections) {
    if (entry[0] === newcomer || entry[1].key !== undefined) continue;
    if (chosen === undefined || before(entry[1], chosen[1])) chosen = entry;
  }
  return chosen?.[0];
};

/** Of the connections `keep` keeps, the one `by` holds the most of (a key, an address), ties to `tie`'s pick. */
const heaviest = (
  connections: ReadonlyMap<Socket, Connection>,
  newcomer: Socket,
  by: (connection: Connection) => string,
  keep: (connection: Connection) => boolean,
  tie: (a: Connection, b: Connection) => boolean,
): [Socket, Connection] | undefined => {
  const held = new Map<string, number>();
  for (const [socket, connection] of connections) if (socket !== newcomer) held.set(by(connection), (held.get(by(connection)) ?? 0) + 1);
  let chosen: [Socket, Connection] | undefined;
  for (const entry of connections) {
    if (entry[0] === newcomer || !keep(entry[1])) continue;
    const [weight, best] = [held.get(by(entry[1]))!, chosen === undefined ? -1 : held.get(by(chosen[1]))!];
    if (weight > best || (weight === best && tie(entry[1], chosen![1]))) chosen = entry;
  }
  return chosen;
};

/**
 * When every connection has shown a valid key: of the key holding the most connections, the one
 * waiting longest for a head; else the newest request of the address holding the most connections,
 * if it holds more than the newcomer's; else the newcomer itself.
 */
const keyedVictim = (connections: ReadonlyMap<Socket, Connection>, newcomer: Socket, address: string): Socket => {
  const idle = heaviest(
    connections,
    newcomer,
    (connection) => connection.key ?? '',
    (connection) => connection.waitingSince !== undefined,
    (a, b) => a.waitingSince! < b.waitingSince!,
  );
  if (idle !== undefined) return idle[0];
  const perAddress = (of: string) => [...connections.values()].filter((connection) => connection.address === of).length;
  const busy = heaviest(
    connections,
    newcomer,
    (connection) => connection.address,
    (connection) => connection.address !== address,
    (a, b) => a.startedAt > b.startedAt,
  );
  return busy !== undefined && perAddress(busy[1].address) > perAddress(address) ? busy[0] : newcomer;
};

/**
 * The cap and the shares. At `maxConnections`, a newcomer closes, in this order:
 * 1. a connection that has shown no valid key (a client still sending its head, a flood of made-up
 *    keys, a crowd of idle sockets), whatever its address: one waiting for a head first, the longest
 *    waiting; then one refused (by the authorizer or the firewall); then the longest running;
 * 2. else a connection of the key holding the most that waits for a head (an idle keep-alive one);
 * 3. else the newest request of the address holding the most connections, when it holds more than
 *    the newcomer's (its function, if it runs, runs on);
 * 4. else the newcomer itself: every connection is busy and no address holds more than the newcomer's.
 * A key (the authorizer's principal) has at most `maxRequestsPerKey` requests under way.
 */
export const connectionShares = (server: Server, bounds: { maxConnections: number; maxRequestsPerKey: number }): ConnectionShares => {
  const connections = new Map<Socket, Connection>();
  const perKey = new Map<string, number>();
  const count = (key: string, by: number) => {
    const next = (perKey.get(key) ?? 0) + by;
    if (next === 0) perKey.delete(key);
    else perKey.set(key, next);
  };

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    connections.set(socket, { address, waitingSince: performance.now(), startedAt: 0, key: undefined, refused: false });
    // Forgotten at once when closed here: its 'close' comes later, and the next newcomer must not pick it again.
    socket.once('close', () => connections.delete(socket));
    if (connections.size <= bounds.maxConnections) return;
    const closed = keylessVictim(connections, socket) ?? keyedVictim(connections, socket, address);
    connections.delete(closed);
    closed.destroy();
  });

  return {
    requestStarted: (req, res) => {
      const connection = connections.get(req.socket);
      if (connection === undefined) return;
      connection.waitingSince = undefined;
      connection.startedAt = performance.now();
      res.once('finish', () => (connection.waitingSince = performance.now()));
    },
    admitKey: (res, key) => {
      const connection = connections.get(res.req.socket);
      if (connection !== undefined) connection.key = key;
      if ((perKey.get(key) ?? 0) >= bounds.maxRequestsPerKey) return false;
      count(key, 1);
      res.once('close', () => count(key, -1));
      return true;
    },
    refused: (req) => {
      const connection = connections.get(req.socket);
      if (connection !== undefined) connection.refused = true;
    },
    standing: (req) => {
      const connection = connections.get(req.socket);
      return connection?.key !== undefined ? 'keyed' : connection?.refused ? 'refused' : 'new';
    },
  };
};
