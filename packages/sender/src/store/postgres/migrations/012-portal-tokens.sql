-- Portal links (design D54): one row per link not yet used, keyed by the SHA-256 of its token, never
-- the token itself. Using a link deletes its row in one statement, so of two processes opening it at
-- once, exactly one gets the row.
CREATE TABLE portal_tokens (
  token_hash TEXT COLLATE "C" PRIMARY KEY,
  account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
-- What the hourly retention job walks: links that were never used.
CREATE INDEX portal_tokens_by_expiry ON portal_tokens (expires_at);
