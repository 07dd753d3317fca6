-- A claim used to write the lease into the delivery row's indexed columns: a new version of the
-- row and an entry in each of its seven indexes, all written again when the attempt finished. A
-- lease is now a row of its own (claim = insert, finish = delete) in a table that holds only what
-- is in flight, which is what the per-endpoint cap counts. The delivery keeps its lease expiry, no
-- longer indexed, so that a claim's write of it is a heap-only (HOT) update, and a concurrent
-- claimer that locks the row after it re-checks it (see claim-due.ts); the free space left in each
-- page is what lets that update stay on its page. Leases held while migrating move over unchanged.
CREATE TABLE leases (
  delivery_id TEXT COLLATE "C" PRIMARY KEY,
  endpoint_id TEXT COLLATE "C" NOT NULL,
  token TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
INSERT INTO leases (delivery_id, endpoint_id, token, expires_at)
SELECT id, endpoint_id, lease_token, lease_expires_at FROM deliveries
WHERE lease_token IS NOT NULL AND lease_expires_at IS NOT NULL;
DROP INDEX deliveries_leased;
ALTER TABLE deliveries DROP COLUMN lease_token;
ALTER TABLE deliveries SET (fillfactor = 85);
