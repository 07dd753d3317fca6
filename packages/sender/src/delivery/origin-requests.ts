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

export function createOriginRequests(connections: number): OriginRequests {
  const open = new Map<string, number>();
  const count = (key: string) => open.get(key) ?? 0;
  const add = (key: string, by: number) => {
    const n = count(key) + by;
    if (n === 0) open.delete(key);
    else open.set(key, n);
  };
  const poolKey = (pool: 0 | 1, origin: string) => `${pool} ${origin}`;
  const accountKey = (origin: string, account: string) => `a ${origin} ${account}`;
  return {
    open(origin, account) {
      const first = count(poolKey(0, origin));
      const light = account !== undefined && 2 * count(accountKey(origin, account)) < connections;
      // The second only while it has room: full too, the first frees a connection as soon.
      const pool: 0 | 1 = first >= connections && light && count(poolKey(1, origin)) < connections ? 1 : 0;
      const queued = (pool === 0 ? first : count(poolKey(1, origin))) >= connections;
      add(poolKey(pool, origin), 1);
      if (account !== undefined) add(accountKey(origin, account), 1);
      return { pool, queued };
    },
    close(origin, account, route) {
      add(poolKey(route.pool, origin), -1);
      if (account !== undefined) add(accountKey(origin, account), -1);
    },
  };
}
