/**
 * Every change a user is answered about (an account, a key, an endpoint, a pause, a retry by
 * hand, a portal link…) is durable before its answer, as a publish is: on SQLite the answer waits
 * for the WAL's sync, on PostgreSQL its transaction commits with `synchronous_commit` on, where
 * claims and attempt records commit without waiting for the flush.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { newId } from '../src/domain/ids.js';
import type { SenderStore } from '../src/store/port.js';
import { createPostgresStore } from '../src/store/postgres/postgres-store.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { storeEndpoint } from './helpers/endpoints.js';
import { pgSchemas } from './helpers/pg-schemas.js';
import { PG_URL, requireService } from './helpers/services.js';

/** The WAL syncs the SQLite store asks for, each held until released while `hold` is set. */
const syncs = vi.hoisted(() => ({
  hold: false,
  held: [] as (() => void)[],
  requested: () => {},
}));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  return {
    ...fs,
    fdatasync: (fd: number, done: (error: unknown) => void) => {
      if (!syncs.hold) return fs.fdatasync(fd, done);
      syncs.held.push(() => fs.fdatasync(fd, done));
      syncs.requested();
    },
  };
});

const T0 = Date.UTC(2026, 11, 7, 12);

interface Scene {
  accountId: string;
  endpointId: string;
  otherEndpointId: string;
  deliveryId: string;
  keyId: string;
}

/**
 * The changes, in an order each can run in, with the tables each writes on PostgreSQL; `before`
 * readies the rows by SQL (`?` for each value) where the change needs a state the store has no
 * call for.
 */
const CHANGES: {
  name: string;
  tables: string[];
  run: (store: SenderStore, s: Scene) => Promise<unknown>;
  before?: (sql: (text: string, values: unknown[]) => Promise<unknown>, s: Scene) => Promise<unknown>;
}[] = [
  {
    name: 'an account',
    tables: ['accounts'],
    run: (store, s) =>
      store.createAccount({ id: s.accountId, name: 'Acme', plan: 'free', apiKeyHash: 'h0', now: T0 }),
  },
  {
    name: 'a new API key',
    tables: ['api_keys'],
    run: (store, s) =>
      store.rotateApiKey(
        s.accountId,
        { id: s.keyId, prefix: 'lh_x', hash: 'h1' },
        { now: T0, expireOthersAt: T0 },
      ),
  },
  {
    name: 'a key revoked',
    tables: ['api_keys'],
    run: (store, s) => store.revokeApiKey(s.accountId, s.keyId, T0),
  },
  {
    name: 'an endpoint',
    tables: ['endpoints'],
    run: (store, s) => storeEndpoint(store, s.accountId, s.endpointId, T0),
  },
  {
    name: 'an endpoint within the quota',
    tables: ['endpoints'],
    run: (store, s) =>
      store.createEndpoint(
        {
          id: s.otherEndpointId,
          accountId: s.accountId,
          url: 'https://other.example.com/hook',
          events: ['click'],
          secret: 'whsec_test',
          description: null,
          now: T0,
        },
        () => {},
      ),
  },
  {
    name: 'an endpoint changed',
    tables: ['endpoints'],
    run: (store, s) => store.updateEndpoint(s.accountId, s.endpointId, { description: 'changed' }, T0 + 1),
  },
  {
    name: 'a pause',
    tables: ['endpoints', 'deliveries', 'endpoints_settling'],
    run: (store, s) => store.pauseEndpoint(s.accountId, s.endpointId, T0 + 2),
  },
  {
    name: 'a resume',
    tables: ['endpoints', 'deliveries', 'endpoints_settling'],
    run: (store, s) => store.resumeEndpoint(s.accountId, s.endpointId, T0 + 3),
  },
  {
    name: 'a retry by hand',
    tables: ['deliveries'],
    run: (store, s) => store.retryNow(s.accountId, s.deliveryId, T0 + 4),
  },
  {
    name: 'a recovery',
    tables: ['deliveries'],
    before: (sql, s) => sql(`UPDATE deliveries SET status = 'failed' WHERE id = ?`, [s.deliveryId]),
    run: async (store, s) => {
      const recovered = await store.recoverDeliveries(s.accountId, s.endpointId, {
        since: 0,
        until: T0 + 10,
        limit: 10,
        now: T0 + 5,
      });
      // It found the failed delivery `before` made.
      expect(recovered).toMatchObject({ ok: true, recovered: 1 });
    },
  },
  {
    name: 'a re-enabling',
    tables: ['endpoints', 'endpoints_settling'],
    before: (sql, s) => sql('UPDATE endpoints SET enabled = false WHERE id = ?', [s.endpointId]),
    run: (store, s) =>
      store.reenableEndpoint(s.accountId, s.endpointId, { replaySkipped: false, now: T0 + 6 }),
  },
  {
    name: 'a secret sealed',
    tables: ['endpoints'],
    run: (store, s) => store.replaceSecrets([{ id: s.endpointId, from: 'whsec_test', to: 'whsec_sealed' }]),
  },
  {
    name: 'a portal link',
    tables: ['portal_tokens'],
    run: (store, s) =>
      store.createPortalToken({ hash: 'p1', accountId: s.accountId, now: T0, expiresAt: T0 + 60_000 }),
  },
  { name: 'a portal link taken', tables: ['portal_tokens'], run: (store) => store.takePortalToken('p1') },
  {
    name: "an endpoint's deletion begun",
    tables: ['endpoints', 'endpoints_being_deleted'],
    run: (store, s) => store.markEndpointDeleted(s.accountId, s.otherEndpointId, T0 + 7),
  },
  {
    name: "an endpoint's deletion ended",
    tables: ['endpoints', 'endpoints_being_deleted'],
    run: (store, s) => store.deleteEndpoint(s.accountId, s.otherEndpointId),
  },
  {
    name: "an account's deletion begun",
    tables: ['accounts', 'deleted_accounts'],
    run: (store, s) => store.markAccountDeleted(s.accountId, T0 + 8),
  },
];

const newScene = (): Scene => ({
  accountId: newId('acct'),
  endpointId: newId('ep'),
  otherEndpointId: newId('ep'),
  deliveryId: '',
  keyId: newId('key'),
});

/** The one event whose delivery the changes after the endpoints' work on. */
async function publishOne(store: SenderStore, s: Scene) {
  const at = T0 + 1;
  const event = {
    id: newId('evt', at),
    accountId: s.accountId,
    name: 'click',
    body: Buffer.from('{}'),
    createdAt: at,
  };
  const { deliveries } = await store.publish(event, () => newId('dlv', at));
  s.deliveryId = deliveries[0]!.id;
}

describe('sqlite: every change a user is answered about waits for the WAL sync', () => {
  const dir = mkdtempSync(join(tmpdir(), 'linkhooks-durable-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lets the changes held behind one sync commit one a turn of the event loop once it ends', async () => {
    const file = join(dir, 'held.db');
    const store = createSqliteStore({ filename: file });
    await store.migrate();
    const ids = ['ep_h0', 'ep_h1', 'ep_h2', 'ep_h3'];
    for (const id of ids) await storeEndpoint(store, 'acct_held', id, T0);
    const raw = new Database(file, { readonly: true });
    const paused = () =>
      (
        raw.prepare("SELECT count(*) AS n FROM endpoints WHERE paused = 1 AND id LIKE 'ep_h%'").get() as {
          n: number;
        }
      ).n;
    try {
      syncs.hold = true;
      const requested = new Promise<void>((resolve) => {
        syncs.requested = resolve;
      });
      // The first pause commits and waits for its sync; the other three are held behind it.
      const first = store.pauseEndpoint('acct_held', ids[0]!, T0);
      await requested;
      const held = ids.slice(1).map((id) => store.pauseEndpoint('acct_held', id, T0));
      await new Promise((resolve) => setImmediate(resolve));
      expect(paused()).toBe(1);
      // What each turn of the event loop sees committed, from the sync's end until all are.
      const seen: number[] = [];
      const watching = new Promise<void>((resolve) => {
        const look = () => {
          seen.push(paused());
          if (seen.at(-1) === ids.length) resolve();
          else setImmediate(look);
        };
        setImmediate(look);
      });
      syncs.hold = false;
      for (const release of syncs.held.splice(0)) release();
      await watching;
      await Promise.all([first, ...held]);
      expect(seen).toContain(2);
      expect(seen).toContain(3);
    } finally {
      syncs.hold = false;
      for (const release of syncs.held.splice(0)) release();
      raw.close();
      await store.close();
    }
  });

  it('answers none before the sync that covers it has ended', async () => {
    const file = join(dir, 'store.db');
    const store = createSqliteStore({ filename: file });
    await store.migrate();
    const raw = new Database(file);
    const sql = async (text: string, values: unknown[]) => raw.prepare(text).run(...values);
    const s = newScene();
    try {
      for (const change of CHANGES) {
        if (change.name === 'a pause') await publishOne(store, s);
        await change.before?.(sql, s);
        syncs.hold = true;
        const requested = new Promise<'sync requested'>((resolve) => {
          syncs.requested = () => resolve('sync requested');
        });
        const answer = change.run(store, s);
        const first = await Promise.race([requested, answer.then(() => 'answered')]);
        expect(first, change.name).toBe('sync requested');
        // A turn of the event loop later the answer still waits for the sync.
        let answered = false;
        void answer.then(() => {
          answered = true;
        });
        await new Promise((resolve) => setImmediate(resolve));
        expect(answered, change.name).toBe(false);
        syncs.hold = false;
        for (const release of syncs.held.splice(0)) release();
        await answer;
      }
      // An account's deletion in steps: a step that removed rows is answered at its commit, and the
      // one that finds nothing left once the sync covers every step before it.
      syncs.hold = true;
      const requested = new Promise<'sync requested'>((resolve) => {
        syncs.requested = () => resolve('sync requested');
      });
      const removed: number[] = [];
      let step: Promise<number>;
      for (;;) {
        step = store.deleteAccountStep(s.accountId, 100);
        const first = await Promise.race([requested, step]);
        if (first === 'sync requested') break;
        removed.push(first);
        if (first === 0) break; // answered without the sync: the check below fails
      }
      expect(removed.length).toBeGreaterThan(0);
      expect(removed.every((n) => n > 0)).toBe(true);
      syncs.hold = false;
      for (const release of syncs.held.splice(0)) release();
      expect(await step).toBe(0);
      expect(await store.getAccount(s.accountId)).toBeNull();
    } finally {
      syncs.hold = false;
      for (const release of syncs.held.splice(0)) release();
      raw.close();
      await store.close();
    }
  });
});

const pgUp = await requireService('PostgreSQL', PG_URL);

describe.skipIf(!pgUp)('postgres: every change a user is answered about commits with the WAL flushed', () => {
  const schemas = pgSchemas('lh_durable');
  afterAll(() => schemas.drop());

  it("commits each with synchronous_commit on, where an API key's use commits without it", async () => {
    const schema = await schemas.migrated();
    const sql = async (text: string, values: unknown[] = []) => {
      const client = await schemas.admin.connect();
      let n = 0;
      try {
        await client.query(`SET search_path TO "${schema}"`);
        return (
          await client.query(
            text.replace(/\?/g, () => `$${++n}`),
            values,
          )
        ).rows;
      } finally {
        client.release();
      }
    };
    // Each row written notes the setting its transaction commits with.
    const tables = [...new Set(CHANGES.flatMap((c) => c.tables))];
    await sql(`CREATE TABLE commit_modes (tbl text, mode text)`);
    await sql(`CREATE FUNCTION note_commit_mode() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO commit_modes VALUES (TG_TABLE_NAME, current_setting('synchronous_commit')); RETURN NULL; END $$`);
    for (const table of tables) {
      await sql(`CREATE TRIGGER note_commit_mode AFTER INSERT OR UPDATE OR DELETE ON ${table}
        FOR EACH ROW EXECUTE FUNCTION note_commit_mode()`);
    }
    const store = createPostgresStore({ connectionString: PG_URL, schema, poolSize: 2 });
    const s = newScene();
    const noted = async () =>
      (await sql('DELETE FROM commit_modes RETURNING tbl, mode')) as { tbl: string; mode: string }[];
    try {
      for (const change of CHANGES) {
        if (change.name === 'a pause') await publishOne(store, s);
        await change.before?.(sql, s);
        await noted();
        await change.run(store, s);
        const modes = await noted();
        expect(
          change.tables.filter((t) => !modes.some((m) => m.tbl === t)),
          `${change.name}: tables it wrote nothing to`,
        ).toEqual([]);
        expect(new Set(modes.map((m) => m.mode)), change.name).toEqual(new Set(['on']));
      }
      // The trigger reads the setting a write commits with: a key's use is noted without the flush.
      await store.touchApiKey(s.keyId, T0 + 9);
      expect(await noted()).toEqual([{ tbl: 'api_keys', mode: 'off' }]);
    } finally {
      await store.close();
    }
  });
});
