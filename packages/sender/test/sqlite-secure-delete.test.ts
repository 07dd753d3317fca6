/**
 * A deleted endpoint's secret is gone from the SQLite file, not left in a free page where anyone
 * with a copy of the file could read it (secure_delete).
 */

import type { LookupAddress } from 'node:dns';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { createSender } from '../src/engine/sender.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'linkhooks-secure-delete-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every name resolves to a public address: no network needed to create endpoints. */
const publicResolver = (
  _host: string,
  options: { all?: boolean },
  callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
) =>
  options.all
    ? callback(null, [{ address: '93.184.216.34', family: 4 }])
    : callback(null, '93.184.216.34', 4);

/** The file's bytes once the write-ahead log is folded into it and emptied. */
function fileBytes(filename: string): Buffer {
  const db = new Database(filename);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return readFileSync(filename);
}

it('overwrites a deleted endpoint’s secret in the file', async () => {
  const filename = join(dir, 'store.db');
  const store = createSqliteStore({ filename });
  await store.migrate();
  const sender = createSender({ store, resolve: publicResolver });
  const endpoints = await Promise.all(
    [1, 2, 3].map((n) =>
      sender.createEndpoint('acct_1', { url: `https://hooks${n}.example.com/in`, events: ['click'] }),
    ),
  );
  await sender.stop(0);
  await store.close();
  // Without a master key the secrets are stored as they are: each is in the file now.
  const before = fileBytes(filename);
  for (const e of endpoints) expect(before.includes(e.secret)).toBe(true);

  const again = createSqliteStore({ filename });
  const sender2 = createSender({ store: again, resolve: publicResolver });
  await sender2.deleteEndpoint('acct_1', endpoints[1]!.id);
  await sender2.stop(0);
  await again.close();
  const after = fileBytes(filename);
  expect(after.includes(endpoints[1]!.secret)).toBe(false);
  expect(after.includes(endpoints[0]!.secret)).toBe(true);
});
