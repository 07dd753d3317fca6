CREATE TABLE endpoints (
  id TEXT COLLATE "C" PRIMARY KEY,
  account_id TEXT COLLATE "C" NOT NULL,
  url TEXT NOT NULL,
  -- An array of event names: jsonb keeps array order, and publish filters with `events ? name`.
  events JSONB NOT NULL,
  secret TEXT NOT NULL,
  description TEXT,
  enabled BOOLEAN NOT NULL DEFAULT true,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  disabled_reason TEXT,
  disabled_at BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX endpoints_by_account ON endpoints (account_id, id);

CREATE TABLE events (
  id TEXT COLLATE "C" PRIMARY KEY,
  account_id TEXT COLLATE "C" NOT NULL,
  name TEXT NOT NULL,
  body BYTEA NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE TABLE deliveries (
  id TEXT COLLATE "C" PRIMARY KEY,
  event_id TEXT COLLATE "C" NOT NULL REFERENCES events (id),
  endpoint_id TEXT COLLATE "C" NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  account_id TEXT COLLATE "C" NOT NULL,
  event_name TEXT NOT NULL,
  status TEXT NOT NULL
    CHECK (status IN ('pending', 'awaiting_retry', 'delivered', 'failed', 'held', 'skipped')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT,
  lease_token TEXT,
  lease_expires_at BIGINT,
  last_failure_kind TEXT,
  last_status_code INTEGER,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
-- Only claimable rows are indexed by due time: a million future retries cost the claim nothing.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('pending', 'awaiting_retry');
CREATE INDEX deliveries_leased ON deliveries (lease_expires_at, endpoint_id) WHERE lease_expires_at IS NOT NULL;
CREATE INDEX deliveries_by_account ON deliveries (account_id, id);
CREATE INDEX deliveries_by_endpoint ON deliveries (endpoint_id, id);
CREATE INDEX deliveries_by_event ON deliveries (event_id);
CREATE INDEX deliveries_final ON deliveries (updated_at) WHERE status IN ('delivered', 'failed', 'skipped');

CREATE TABLE attempts (
  delivery_id TEXT COLLATE "C" NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  number INTEGER NOT NULL,
  started_at BIGINT NOT NULL,
  duration_ms INTEGER NOT NULL,
  status_code INTEGER,
  failure_kind TEXT,
  error_message TEXT,
  response_snippet TEXT,
  next_attempt_at BIGINT,
  -- TEXT, not jsonb: the headers as recorded, in the order they were sent.
  request_headers TEXT NOT NULL,
  PRIMARY KEY (delivery_id, number)
);
