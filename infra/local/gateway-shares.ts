/**
 * The local gateway's connection cap and each client's share of it (docs/developing.md#small-decisions): no key holds more than its share of requests under
 * way, and at the cap the client address holding the most connections gives one up, not the newcomer.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

type Connection = {
  readonly address: string;
  /** Since when it has waited for a whole request head; undefined while a request is under way. */
  waitingSince: number | undefined;
  /** When its request under way began. */
  startedAt: number;
};

export type ConnectionShares = {
  /** A whole head arrived: the connection has a request under way until its answer is sent. */
  requestStarted(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Counts the request against its key's share (requests under way at once) until its answer is
   * done or its connection gone; false, counting nothing, when the key already holds its share.
   */
  admitKey(res: ServerResponse, key: string): boolean;
};

/**
 * Which connection a newcomer from `address` closes at the cap (the newcomer itself when no other
 * may go): a connection waiting for a head, of the address holding the most, the longest waiting;
 * else the newest request of another address holding more than the newcomer's.
 */
const victim = (
  connections: ReadonlyMap<Socket, Connection>,
  perAddress: ReadonlyMap<string, number>,
  newcomer: Socket,
  address: string,
): Socket => {
  const held = (candidate: Connection) => perAddress.get(candidate.address) ?? 0;
  /** Of the connections `keep` keeps, the one whose address holds the most, ties going to `tie`'s pick. */
  const heaviest = (keep: (connection: Connection) => boolean, tie: (a: Connection, b: Connection) => boolean) => {
    let chosen: [Socket, Connection] | undefined;
    for (const entry of connections) {
      if (entry[0] === newcomer || !keep(entry[1])) continue;
      if (chosen === undefined || held(entry[1]) > held(chosen[1]) || (held(entry[1]) === held(chosen[1]) && tie(entry[1], chosen[1])))
        chosen = entry;
    }
    return chosen;
  };
  const waiting = heaviest(
    (connection) => connection.waitingSince !== undefined,
    (a, b) => a.waitingSince! < b.waitingSince!,
  );
  if (waiting !== undefined) return waiting[0];
  const busy = heaviest(
    (connection) => connection.address !== address,
    (a, b) => a.startedAt > b.startedAt,
  );
  return busy !== undefined && held(busy[1]) > (perAddress.get(address) ?? 0) ? busy[0] : newcomer;
};

/**
 * The cap and the shares. At `maxConnections`, a newcomer closes, in this order:
 * 1. a connection waiting for a request head (a partial head, or an idle keep-alive connection) of
 *    the client address that holds the most connections, the one waiting longest;
 * 2. else, when another address holds more connections than the newcomer's, that address's
 *    newest request under way (its function, if it runs, runs on);
 * 3. else the newcomer itself: every address holds its share and every connection is busy.
 * A key (the authorizer's principal) has at most `maxRequestsPerKey` requests under way.
 */
export const connectionShares = (server: Server, bounds: { maxConnections: number; maxRequestsPerKey: number }): ConnectionShares => {
  const connections = new Map<Socket, Connection>();
  const perAddress = new Map<string, number>();
  const perKey = new Map<string, number>();
  const count = (counts: Map<string, number>, key: string, by: number) => {
    const next = (counts.get(key) ?? 0) + by;
    if (next === 0) counts.delete(key);
    else counts.set(key, next);
  };

  /** Forgets a connection (at once: its 'close' comes later, and the next newcomer must not pick it again). */
  const forget = (socket: Socket) => {
    const connection = connections.get(socket);
    if (connection === undefined) return;
    connections.delete(socket);
    count(perAddress, connection.address, -1);
  };

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    connections.set(socket, { address, waitingSince: performance.now(), startedAt: 0 });
    count(perAddress, address, 1);
    socket.once('close', () => forget(socket));
    if (connections.size <= bounds.maxConnections) return;
    const closed = victim(connections, perAddress, socket, address);
    forget(closed);
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
      if ((perKey.get(key) ?? 0) >= bounds.maxRequestsPerKey) return false;
      count(perKey, key, 1);
      res.once('close', () => count(perKey, key, -1));
      return true;
    },
  };
};
