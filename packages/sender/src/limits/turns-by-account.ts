/**
 * Work that one account can ask for many of at once, taken in turns by account: at most `atOnce`
 * at a time in a process, the waiting account with the fewest running next, then the one served
 * least lately. One account's hundred requests wait behind each other, not in front of another
 * account's one. The statistics' reads, the log's searches (read-turns.ts, design D82) and the engine's steps
 * (store/step-turns.ts, design D83) take their turns here.
 *
 * @module
 */

export interface TurnsByAccount {
  /** Runs `work` in `accountId`'s turn. */
  take<T>(accountId: string, work: () => T | Promise<T>): Promise<T>;
  /** How many of `accountId`'s are running or waiting. */
  held(accountId: string): number;
}

/**
 * An account's work in this process: running, waiting (oldest first), and its place in the turns
 * (`startedAt`): the number of the last start of its work, or, for an account with none running
 * or waiting until now, half a start before the last start of anyone's, so that it goes after the
 * accounts that have waited since before it came and before the one served last.
 */
interface Held {
  running: number;
  waiting: (() => void)[];
  startedAt: number;
}

/** Of the accounts with work waiting, the one whose work starts next: fewest running, then served least lately. */
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

/**
 * @example
 * const turns = turnsByAccount(2);
 * const stats = await turns.take(accountId, () => store.endpointStats(accountId, id, window));
 */
export function turnsByAccount(atOnce: number): TurnsByAccount {
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
    held(accountId) {
      const account = held.get(accountId);
      return account ? account.running + account.waiting.length : 0;
    },

    async take(accountId, work) {
      let account = held.get(accountId);
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
        return await work();
      } finally {
        mine.running--;
        running--;
        if (mine.running === 0 && mine.waiting.length === 0) held.delete(accountId);
        startNext();
      }
    },
  };
}
