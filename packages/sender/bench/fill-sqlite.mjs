// Bulk-fills a migrated SQLite store for the claim benchmark of bench/run.mjs, in a child process so
// the big page cache of the bulk insert does not count in the benchmark's peak RSS.
//
//   node bench/fill-sqlite.mjs <file> <future> <endpoints> <due> <now>
//
// Rows match src/store/sqlite/migrations.ts: `endpoints` endpoints of one account; `future`
// deliveries `awaiting_retry` due between 10 minutes and 10.5 hours after `now` (a fan-out of
// ⌈future / endpoints⌉ events to every endpoint); `due` deliveries `pending` and due a second
// before `now`, one per endpoint. One transaction, rows generated inside SQLite.
import Database from 'better-sqlite3';

const [file, future, endpoints, due, now] = process.argv.slice(2).map((a, i) => (i === 0 ? a : Number(a)));
if (!file || !(future >= 0) || !(endpoints > 0) || !(due >= 0) || !(now > 0) || due > endpoints) {
  console.error('usage: node bench/fill-sqlite.mjs <file> <future> <endpoints> <due ≤ endpoints> <now>');
  process.exit(2);
}

const db = new Database(file);
db.pragma('busy_timeout = 5000');
db.pragma('cache_size = -262144'); // 256 MiB: the indexes of a million rows stay in memory while filling
const events = Math.max(1, Math.ceil(future / endpoints));
const body = Buffer.alloc(1024, 0x20);
const series = (n) => `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ${n})`;

db.transaction(() => {
  db.prepare(
    `${series(endpoints)}
     INSERT INTO endpoints (id, account_id, url, events, secret, created_at, updated_at)
     SELECT printf('ep_%06d', i), 'acct_claim', printf('https://127.0.0.1/hooks/%d', i), '["click"]',
            'whsec_bench_not_a_secret', @now, @now
     FROM n`,
  ).run({ now });
  db.prepare(
    `${series(events)}
     INSERT INTO events (id, account_id, name, body, created_at)
     SELECT printf('evt_%08d', i), 'acct_claim', 'click', @body, @now - 3600000 FROM n`,
  ).run({ now, body });
  if (future > 0) {
    db.prepare(
      `${series(future)}
       INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                               next_attempt_at, last_failure_kind, last_status_code, created_at, updated_at)
       SELECT printf('dlv_f%08d', i), printf('evt_%08d', i / @endpoints), printf('ep_%06d', i % @endpoints),
              'acct_claim', 'click', 'awaiting_retry', 1 + i % 5,
              @now + 600000 + (i * 7919) % 37200000, 'http_status', 500, @now - 3600000, @now - 60000
       FROM n`,
    ).run({ now, endpoints });
  }
  if (due > 0) {
    db.prepare(
      `${series(due)}
       INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                               next_attempt_at, created_at, updated_at)
       SELECT printf('dlv_due%04d', i), 'evt_00000000', printf('ep_%06d', i), 'acct_claim', 'click',
              'pending', 0, @now - 1000, @now - 1000, @now - 1000
       FROM n`,
    ).run({ now });
  }
}).immediate();
db.pragma('wal_checkpoint(TRUNCATE)');
const { n } = db.prepare('SELECT count(*) AS n FROM deliveries').get();
db.close();
console.log(JSON.stringify({ deliveries: n }));
