-- Pausing (design D34): a paused endpoint's deliveries wait as `held`, outside the due-time index.
ALTER TABLE endpoints ADD COLUMN paused BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE endpoints ADD COLUMN paused_at BIGINT;
-- What pausing, resuming and re-enabling walk: an endpoint's queued deliveries, never its whole log.
CREATE INDEX deliveries_queued_by_endpoint ON deliveries (endpoint_id, status)
  WHERE status IN ('pending', 'awaiting_retry', 'held');
-- What recovery walks: an endpoint's failed deliveries by creation time (design D35).
CREATE INDEX deliveries_failed ON deliveries (endpoint_id, created_at) WHERE status = 'failed';
-- The platform's own id of an event, unique per account: a repeat is refused by the index, not by
-- a read before the write, so concurrent repeats store one event (design D36).
ALTER TABLE events ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX events_idempotency_key ON events (account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
-- What deleting an account walks, a step at a time (design D37).
CREATE INDEX events_by_account ON events (account_id, id);
-- API keys (design D37): several per account, each hashed; accounts.api_key_hash keeps the first
-- key's hash and is no longer read.
CREATE TABLE api_keys (
  id TEXT COLLATE "C" PRIMARY KEY,
  account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  prefix TEXT,
  key_hash TEXT COLLATE "C" NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT,
  expires_at BIGINT,
  revoked_at BIGINT
);
CREATE INDEX api_keys_by_account ON api_keys (account_id, id);
INSERT INTO api_keys (id, account_id, prefix, key_hash, created_at)
SELECT 'key_' || substr(id, 6), id, NULL, api_key_hash, created_at FROM accounts;
ALTER TABLE accounts ADD COLUMN deleted_at BIGINT;
