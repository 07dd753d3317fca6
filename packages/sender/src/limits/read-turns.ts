/**
 * Reads whose cost follows what one account's log holds (an endpoint's statistics over a window),
 * taken in turns by account (design D82): at most `atOnce` at a time in a process, the waiting
 * account with the fewest running next, then the one served least lately; an account with
 * `perAccount` running or waiting is refused at once rather than queued behind itself.
 *
 * @module
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

/**
 * An account's reads in this process: those running, those waiting (oldest first), and its place
 * in the turns (`startedAt`): the number of the last start of its reads, or, for an account with
 * none running or waiting until now, half a start before the last start of anyone's, so that it
 * goes after the accounts that have waited since before it came and before the one served last.
 */
interface Held {
  running: number;
  waiting: (() => void)[];
  startedAt: number;
}

/** Of the accounts with reads waiting, the one whose read starts next: fewest running, then served least lately. */
export function whoseTurn<K>(accounts: Iterable<[K, { running: number; startedAt: number }]>): K | undefined {
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
      const accountId = whoseTurn(waitingAccounts());
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
        account = { running: 0, waiting: [], startedAt: starts - 0.5 };
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
