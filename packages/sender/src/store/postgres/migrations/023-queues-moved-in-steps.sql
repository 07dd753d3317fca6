-- Pausing, resuming, re-enabling and the automatic disabling change the endpoint's flags at once
-- and move its queued deliveries (held, or made claimable again) a bounded step at a time
-- (settle-queue.ts): moved in the transaction that changed the flags, a backlog of 100,000 held the
-- endpoint's row for seconds, and every publish batch with an event for it waited. The endpoints
-- whose deliveries are being moved are listed here: claims pass over those that may not be
-- attempted (claim-due.ts, full_endpoints), and the pruning finishes moves cut short.
-- `release_at`: the due time a re-enabling gives what it releases (NULL: each keeps its own);
-- `replay`: the skipped deliveries are replayed too.
CREATE TABLE endpoints_settling (
  id text PRIMARY KEY REFERENCES endpoints (id) ON DELETE CASCADE,
  account_id text NOT NULL,
  release_at bigint,
  replay boolean NOT NULL DEFAULT false
);
