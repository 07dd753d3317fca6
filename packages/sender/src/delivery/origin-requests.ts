/**
 * A delivery client's requests open to each origin, written or waiting for a connection. One sent
 * while as many are open as the origin's connections waits behind them for one (design D24): its
 * receiver is not yet asked, and its deadline's first part is that wait.
 */
export interface OriginRequests {
  /** Counts a request to `origin` as open; true when it waits behind the others for a connection. */
  open(origin: string): boolean;
  /** A request to `origin` counted by `open` is over. */
  close(origin: string): void;
}

export function createOriginRequests(connections: number): OriginRequests {
  const open = new Map<string, number>();
  return {
    open(origin) {
      const before = open.get(origin) ?? 0;
      open.set(origin, before + 1);
      return before >= connections;
    },
    close(origin) {
      const left = (open.get(origin) ?? 1) - 1;
      if (left === 0) open.delete(origin);
      else open.set(origin, left);
    },
  };
}
