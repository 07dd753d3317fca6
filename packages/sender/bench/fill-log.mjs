// Bulk-fills a migrated SQLite store with a delivery log for the scale part of bench/run.mjs, in a
// child process so the bulk insert's page cache does not count in the benchmark's peak RSS.
//
//   node bench/fill-log.mjs <file> <deliveries> <now>
//
// One account with 8 endpoints; `deliveries` deliveries (one event each), all delivered but the
// oldest ten of ep_000001 (failed: scale.mjs FAILED_SQL); the oldest tenth last updated a day
// before `now` (what a prune with a cutoff of `now - 1 h` deletes), the rest within the last hour.
// Beside them, another account's queue: QUEUE_SHARE of as many deliveries awaiting a retry due a
// day after `now` (what /metrics counts; nothing claims them), their events of one byte each, as on
// PostgreSQL, so the file grows by little more than their rows. Rows are generated inside SQLite.
import Database from 'better-sqlite3';
import { FAILED_SQL, QUEUE_ACCOUNT, QUEUE_SHARE } from './scale.mjs';

const [file, n, now] = process.argv.slice(2).map((a, i) => (i === 0 ? a : Number(a)));
if (!file || !(n > 0) || !(now > 0)) {
  console.error('usage: node bench/fill-log.mjs <file> <deliveries> <now>');
  process.exit(2);
}
const db = new Database(file);
db.pragma('busy_timeout = 5000');
db.pragma('cache_size = -262144');
const series = `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < @n)`;
db.transaction(() => {
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < 8)
     INSERT INTO endpoints (id, account_id, url, events, secret, created_at, updated_at)
     SELECT printf('ep_%06d', i), 'acct_scale', printf('https://127.0.0.1/hooks/%d', i), '["click"]',
            'whsec_bench_not_a_secret', @now, @now FROM n`,
  ).run({ now });
  db.prepare(
    `${series} INSERT INTO events (id, account_id, name, body, created_at)
     SELECT printf('evt_%09d', i), 'acct_scale', 'click', zeroblob(1024),
            CASE WHEN i < @n / 10 THEN @now - 86400000 ELSE @now - 1800000 END FROM n`,
  ).run({ n, now });
  db.prepare(
    `${series} INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                                      next_attempt_at, last_status_code, created_at, updated_at)
     SELECT printf('dlv_%09d', i), printf('evt_%09d', i), printf('ep_%06d', i % 8), 'acct_scale', 'click',
            ${FAILED_SQL}, 1, NULL, 200,
            CASE WHEN i < @n / 10 THEN @now - 86400000 ELSE @now - 1800000 END,
            CASE WHEN i < @n / 10 THEN @now - 86400000 ELSE @now - 1800000 END FROM n`,
  ).run({ n, now });
  const queued = `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < @q)`;
  db.prepare(
    `INSERT INTO endpoints (id, account_id, url, events, secret, created_at, updated_at)
     VALUES ('ep_queue', @account, 'https://127.0.0.1/hooks/queue', '["click"]', 'whsec_bench_not_a_secret', @now, @now)`,
  ).run({ account: QUEUE_ACCOUNT, now });
  db.prepare(
    `${queued} INSERT INTO events (id, account_id, name, body, created_at)
     SELECT printf('evq_%09d', i), @account, 'click', zeroblob(1), @now - 1800000 FROM n`,
  ).run({ q: n * QUEUE_SHARE, account: QUEUE_ACCOUNT, now });
  db.prepare(
    `${queued} INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                                      next_attempt_at, last_status_code, created_at, updated_at)
     SELECT printf('dlq_%09d', i), printf('evq_%09d', i), 'ep_queue', @account, 'click', 'awaiting_retry', 1,
            @now + 86400000, 503, @now - 1800000, @now - 1800000 FROM n`,
  ).run({ q: n * QUEUE_SHARE, account: QUEUE_ACCOUNT, now });
}).immediate();
db.pragma('wal_checkpoint(TRUNCATE)');
db.close();
