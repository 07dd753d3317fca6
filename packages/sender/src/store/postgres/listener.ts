/**
 * LISTEN/NOTIFY wake-ups for the PostgreSQL store (design D13): one dedicated connection,
 * opened on the first subscription and closed with the last, that LISTENs on `linkhooks_due`.
 * `publish`, `reenableEndpoint` and `retryNow` notify inside their transactions, so a worker on
 * another machine claims new work at once instead of at its next poll. Notifications are a
 * latency optimisation only: workers still poll, so a lost one delays work, it never loses it.
 */
import pg from 'pg';
import { closeWaitOf, DUE_CHANNEL, endClient, whileMaking } from './connection.js';

const LISTEN_DUE = `LISTEN ${DUE_CHANNEL}`;

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 30_000;

export interface DueListener {
  subscribe(listener: () => void): () => void;
  /** Ends the connection (and any reconnect timer); resolves once the socket is closed. */
  close(): Promise<void>;
}

/**
 * @param schema only notifications whose payload is this schema wake the listeners: stores on
 *   other schemas of the same database (tests, tenants) share the channel but not the wake-ups.
 * @param timeoutMs how long its connection may take to open; closing waits closeWaitOf it before
 *   its socket is dropped (a server that stopped answering never closes it).
 */
export function createDueListener(config: pg.ClientConfig, schema: string, timeoutMs: number): DueListener {
  const listeners = new Set<() => void>();
  const ending = new Set<Promise<void>>();
  let client: pg.Client | null = null;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let retryMs = FIRST_RETRY_MS;
  let closed = false;

  const wake = () => {
    for (const listener of [...listeners]) {
      try {
        listener();
      } catch {
        // A listener's failure is its own; the others still get woken.
      }
    }
  };

  const making = new Set<pg.ClientBase>();
  const end = (c: pg.Client) => {
    const done = endClient(c, making.has(c) ? 0 : closeWaitOf(timeoutMs));
    ending.add(done);
    void done.then(() => ending.delete(done));
  };

  const connect = () => {
    if (closed || client || retry || listeners.size === 0) return;
    const c = new pg.Client({ ...config, keepAlive: true, connectionTimeoutMillis: timeoutMs });
    client = c;
    whileMaking(c, making);
    c.on('notification', (message) => {
      if (message.channel === DUE_CHANNEL && message.payload === schema) wake();
    });
    c.on('error', () => lost(c));
    c.on('end', () => lost(c));
    c.connect()
      .then(() => c.query(LISTEN_DUE))
      .then(
        () => {
          if (client !== c) return;
          retryMs = FIRST_RETRY_MS;
          // Anything published before LISTEN took effect (first connect, or while reconnecting)
          // sent no wake-up to us: wake once now so nothing waits for the next poll.
          wake();
        },
        () => lost(c),
      );
  };

  const lost = (c: pg.Client) => {
    if (client !== c) return;
    client = null;
    end(c);
    if (closed || listeners.size === 0) return;
    retry = setTimeout(() => {
      retry = null;
      connect();
    }, retryMs);
    retry.unref?.();
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
  };

  const stop = () => {
    if (retry) clearTimeout(retry);
    retry = null;
    const c = client;
    client = null;
    if (c) end(c);
  };

  return {
    subscribe(listener) {
      // Wrapped: the same function subscribed twice is two subscriptions, each removable once.
      const entry = () => listener();
      listeners.add(entry);
      connect();
      return () => {
        if (!listeners.delete(entry)) return;
        if (listeners.size === 0) stop();
      };
    },
    async close() {
      closed = true;
      listeners.clear();
      stop();
      await Promise.all([...ending]);
    },
  };
}
