/**
 * Which of a delivery client's two connection pools a request goes through, and whether it waits
 * there for a connection (design D24, D25). The first pool keeps up to `connections` connections to
 * each origin; a request sent while as many of its requests are open waits behind them. While it
 * is full and the second has room, an account whose requests at that origin are fewer than half its
 * connections goes through the second: one customer's requests that hang at a server many share
 * do not keep a customer with few requests there waiting.
 */
export interface Route {
  /** 0 the first pool, 1 the second. */
  pool: 0 | 1;
  /** Whether it waits behind that pool's requests to the origin for a connection. */
  queued: boolean;
}

export interface OriginRequests {
  /** Counts a request of `account` to `origin` as open, and routes it. */
  open(origin: string, account: string | undefined): Route;
  /** A request counted by `open` is over. */
  close(origin: string, account: string | undefined, route: Route): void;
}

/** Keep-alive sockets per origin in each pool, unless the client is given another number. */
export const CONNECTIONS_PER_ORIGIN = 16;

/**
 * The engine's connections per origin for an origin's share of `perOriginCap`: up to 16 (more
 * cost a TLS handshake each and measured slower), never more than the share.
 */
export const connectionsAt = (perOriginCap: number): number => Math.min(CONNECTIONS_PER_ORIGIN, perOriginCap);

/**
 * Below this many requests open at an origin, an account's requests there may go through the
 * second pool: half its `connections`. The claim leaves at most as many of an origin's share to
 * the other accounts there (a quarter of a small share; design D25), so their requests find that
 * pool.
 */
export const fewAtOrigin = (connections: number): number => connections / 2;

/** An origin's open requests: in each pool, and of each account. */
interface Open {
  pools: [number, number];
  accounts: Map<string, number>;
}

export function createOriginRequests(connections: number): OriginRequests {
  const few = fewAtOrigin(connections);
  const byOrigin = new Map<string, Open>();
  return {
    open(origin, account) {
      let open = byOrigin.get(origin);
      if (!open) {
        open = { pools: [0, 0], accounts: new Map() };
        byOrigin.set(origin, open);
      }
      const ofAccount = account === undefined ? undefined : (open.accounts.get(account) ?? 0);
      const light = ofAccount !== undefined && ofAccount < few;
      const [first, second] = open.pools;
      // The second only while it has room: full too, the first frees a connection as soon.
      const pool: 0 | 1 = first >= connections && light && second < connections ? 1 : 0;
      const queued = open.pools[pool] >= connections;
      open.pools[pool]++;
      if (account !== undefined) open.accounts.set(account, (ofAccount ?? 0) + 1);
      return { pool, queued };
    },
    close(origin, account, route) {
      const open = byOrigin.get(origin);
      if (!open) return;
      open.pools[route.pool]--;
      if (account !== undefined) {
        const left = (open.accounts.get(account) ?? 1) - 1;
        if (left === 0) open.accounts.delete(account);
        else open.accounts.set(account, left);
      }
      if (open.pools[0] + open.pools[1] === 0) byOrigin.delete(origin);
    },
  };
}
