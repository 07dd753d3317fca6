-- Pausing, resuming, re-enabling and the automatic disabling change the endpoint's flags at once
-- and move its queued deliveries (held, or made claimable again) a bounded step at a time
-- (settle-queue.ts): moved in the transaction that changed the flags, a backlog of 100,000 held the
-- event loop for a second. The endpoints whose deliveries are being moved are listed here, for the
-- pruning to finish moves cut short. `release_at`: the due time a re-enabling gives what it
-- releases (NULL: each keeps its own); `replay`: the skipped deliveries are replayed too.
CREATE TABLE endpoints_settling (
  id TEXT PRIMARY KEY REFERENCES endpoints (id) ON DELETE CASCADE,
  account_id TEXT NOT NULL,
  release_at INTEGER,
  replay INTEGER NOT NULL DEFAULT 0
);
