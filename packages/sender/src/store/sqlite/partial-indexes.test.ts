import { expect, it } from 'vitest';
import { isFinalSql, isQueuedSql, QUEUED_SQL } from '../sql-rules.js';
import { openSqlite } from './database.js';
import { DROP_EXPIRED_SECRETS } from './endpoints.js';
import { migrateSqlite } from './migrate.js';

const migrated = () => {
  const db = openSqlite(':memory:');
  migrateSqlite(db)();
  return db;
};

it('states each partial index’s condition as the statements that read through it repeat it', async () => {
  const db = migrated();
  try {
    const sqlOf = (name: string) =>
      (db.st(`SELECT sql FROM sqlite_schema WHERE name = ?`).pluck().get(name) as string).replace(
        /\s+/g,
        ' ',
      );
    expect(sqlOf('deliveries_queued_by_endpoint').endsWith(` WHERE ${isQueuedSql('status')}`)).toBe(true);
    expect(sqlOf('deliveries_final').endsWith(` WHERE ${isFinalSql('status')}`)).toBe(true);
  } finally {
    await db.close();
  }
});

it('writes a delivery without building a table for any partial index’s condition', async () => {
  const db = migrated();
  try {
    const ephemeral = (sql: string, params: unknown[]) =>
      (db.st(`EXPLAIN ${sql}`).all(...params) as { opcode: string }[]).filter(
        (o) => o.opcode === 'OpenEphemeral',
      ).length;
    // What it looks for: an index over an IN list of three statuses builds one for the row before
    // and one for the row after.
    db.exec(
      `CREATE TABLE listed (id TEXT PRIMARY KEY, status TEXT);
       CREATE INDEX listed_queued ON listed (id) WHERE status IN ${QUEUED_SQL}`,
    );
    expect(ephemeral('UPDATE listed SET status = ? WHERE id = ?', ['held', 'd'])).toBe(2);
    expect(
      ephemeral('UPDATE deliveries SET status = ?, updated_at = ? WHERE id = ?', ['delivered', 1, 'd']),
    ).toBe(0);
    expect(
      ephemeral(
        `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, next_attempt_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ['d', 'e', 'p', 'a', 'click', 'pending', 1, 1, 1],
      ),
    ).toBe(0);
  } finally {
    await db.close();
  }
});

it('drops previous secrets past their grace through the index of endpoints holding one, not every row', async () => {
  const db = migrated();
  try {
    const plan = (db.st(`EXPLAIN QUERY PLAN ${DROP_EXPIRED_SECRETS}`).all(1) as { detail: string }[])
      .map((r) => r.detail)
      .join('\n');
    expect(plan).toMatch(/SEARCH endpoints USING INDEX endpoints_secret_expiring/);
  } finally {
    await db.close();
  }
});
