/**
 * Reads whose cost follows what one account's log holds (an endpoint's statistics over a window; a
 * search of the log by an id many events carry, in turns of its own), taken in turns by account (design D82,
 * turns-by-account.ts), at most `atOnce` at a time in a process; an account with `perAccount`
 * running or waiting is refused at once rather than queued behind itself.
 *
 * @module
 */
import { rateLimited } from './rate-limited.js';
import { turnsByAccount } from './turns-by-account.js';

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

/** `what`: the reads a refusal names ("statistics requests"). */
export function createReadTurns(
  what: string,
  atOnce = READS_AT_ONCE,
  perAccount = READS_PER_ACCOUNT,
): ReadTurns {
  const turns = turnsByAccount(atOnce);
  return {
    run(accountId, read) {
      if (turns.held(accountId) >= perAccount)
        return Promise.reject(rateLimited(`${what} for this account at once`, RETRY_AFTER_MS));
      return turns.take(accountId, read);
    },
  };
}
