/**
 * Reads whose cost follows what an account's log holds (an endpoint's statistics over a window: a
 * busy endpoint's month is seconds of reading) taken in turns by account (design D82). Within its
 * API requests a minute, one account asking again and again held every pooled PostgreSQL
 * connection, which claims and records need too, or filled SQLite's one reading thread ahead of
 * every other account's reads and the metrics' count. Now a process runs at most `atOnce` of them;
 * the next to run is the waiting account's with the fewest running, then the one served least
 * lately; and an account with `perAccount` running or waiting is refused at once (`rate_limited`)
 * rather than queued behind itself.
 */
import { rateLimited } from './rate-limited.js';

/** Such reads one process runs at once: two of PostgreSQL's pooled connections, by default ten. */
export const READS_AT_ONCE = 2;
/** Such reads one account may have running or waiting in one process. */
export const READS_PER_ACCOUNT = 4;
/** What a refused read is told to wait: about one read of a busy endpoint's month. */
const RETRY_AFTER_MS = 1_000;

export interface ReadTurns {
  /** Runs `read` in `accountId`'s turn; refuses with `rate_limited` when the account holds its share. */
  run<T>(accountId: string, read: () => Promise<T>): Promise<T>;
}

/** An account's reads in this process: those running, those waiting (oldest first), when it last started one. */
interface Held {
  running: number;
  waiting: (() => void)[];
  startedAt: number;
}

/** Of the accounts with reads waiting, the one whose read starts next: fewest running, then served least lately. */
export function nextTurn<K>(accounts: Iterable<[K, { running: number; startedAt: number }]>): K | undefined {
  let best: [K, { running: number; startedAt: number }] | undefined;
  for (const entry of accounts) {
    const [, a] = entry;
    if (
      !best ||
      a.running < best[1].running ||
      (a.running === best[1].running && a.startedAt < best[1].startedAt)
    )
      best = entry;
  }
  return best?.[0];
}

export function createReadTurns(
  what: string,
  atOnce = READS_AT_ONCE,
  perAccount = READS_PER_ACCOUNT,
): ReadTurns {
  const held = new Map<string, Held>();
  let running = 0;
  /** Counts starts: an account's `startedAt` orders turns, with no clock to tie. */
  let starts = 0;

  function* waitingAccounts() {
    for (const entry of held) if (entry[1].waiting.length > 0) yield entry;
  }
  const startNext = () => {
    while (running < atOnce) {
      const accountId = nextTurn(waitingAccounts());
      if (accountId === undefined) return;
      const account = held.get(accountId)!;
      account.running++;
      account.startedAt = ++starts;
      running++;
      account.waiting.shift()!();
    }
  };

  return {
    async run(accountId, read) {
      let account = held.get(accountId);
      if (account && account.running + account.waiting.length >= perAccount)
        throw rateLimited(`${what} for this account at once`, RETRY_AFTER_MS);
      if (!account) {
        account = { running: 0, waiting: [], startedAt: 0 };
        held.set(accountId, account);
      }
      const mine = account;
      await new Promise<void>((resolve) => {
        mine.waiting.push(resolve);
        startNext();
      });
      try {
        return await read();
      } finally {
        mine.running--;
        running--;
        if (mine.running === 0 && mine.waiting.length === 0) held.delete(accountId);
        startNext();
      }
    },
  };
}
