-- A lease is its row in `leases` alone: a claim no longer copies its expiry into the delivery. That
-- copy was a new version of every delivery handed out (in each of its indexes whenever the update
-- could not stay on its page), written again when the attempt finished.
ALTER TABLE deliveries DROP COLUMN lease_expires_at;
