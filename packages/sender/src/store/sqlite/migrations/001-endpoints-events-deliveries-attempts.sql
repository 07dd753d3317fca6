CREATE TABLE endpoints (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret TEXT NOT NULL,
  description TEXT,
  enabled INTEGER NOT NULL DEFAULT 1,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  disabled_reason TEXT,
  disabled_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX endpoints_by_account ON endpoints (account_id, id);

CREATE TABLE events (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  name TEXT NOT NULL,
  body BLOB NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE deliveries (
  id TEXT PRIMARY KEY,
  event_id TEXT NOT NULL REFERENCES events (id),
  endpoint_id TEXT NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  account_id TEXT NOT NULL,
  event_name TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  lease_token TEXT,
  lease_expires_at INTEGER,
  last_failure_kind TEXT,
  last_status_code INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
-- Only claimable rows are indexed by due time: a million future retries cost the claim nothing.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('pending', 'awaiting_retry');
CREATE INDEX deliveries_leased ON deliveries (lease_expires_at, endpoint_id) WHERE lease_expires_at IS NOT NULL;
CREATE INDEX deliveries_by_account ON deliveries (account_id, id);
CREATE INDEX deliveries_by_endpoint ON deliveries (endpoint_id, id);
CREATE INDEX deliveries_by_event ON deliveries (event_id);
CREATE INDEX deliveries_final ON deliveries (updated_at) WHERE status IN ('delivered', 'failed', 'skipped');

CREATE TABLE attempts (
  delivery_id TEXT NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  number INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  status_code INTEGER,
  failure_kind TEXT,
  error_message TEXT,
  response_snippet TEXT,
  next_attempt_at INTEGER,
  request_headers TEXT NOT NULL,
  PRIMARY KEY (delivery_id, number)
);
