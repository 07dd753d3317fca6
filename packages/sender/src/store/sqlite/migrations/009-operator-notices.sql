-- Operator notifications (design D50): an outbox written in the transaction that changes the
-- endpoint, claimed under a lease and retried on the deliveries' schedule. The body is the bytes
-- every attempt signs.
CREATE TABLE operator_notices (
  id TEXT PRIMARY KEY,
  type TEXT NOT NULL,
  body BLOB NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  lease_token TEXT,
  lease_expires_at INTEGER,
  last_status_code INTEGER,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX operator_notices_due ON operator_notices (next_attempt_at)
  WHERE status IN ('pending', 'awaiting_retry');
