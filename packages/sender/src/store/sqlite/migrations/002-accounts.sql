CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  plan TEXT NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
  -- SHA-256 of the API key: the key is shown once and never stored.
  api_key_hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);
