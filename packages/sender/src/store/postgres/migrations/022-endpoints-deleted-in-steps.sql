-- Deleting an endpoint marks it first (deleted_at), then removes its deliveries a bounded step at a
-- time (delete-endpoint.ts): the mark makes it gone for every endpoint route and for fan-out at
-- once. The partial index finds deletions cut short, to finish them (pruneLog).
ALTER TABLE endpoints ADD COLUMN deleted_at bigint;
CREATE INDEX endpoints_being_deleted ON endpoints (id) WHERE deleted_at IS NOT NULL;
-- Without statistics of the new column, the planner takes most endpoints for marked, and every
-- claim (claim-due.ts, full_endpoints) could read them all; a table that rarely changes may not be
-- analyzed again for long. Not an empty one: its statistics would then say empty, and lookups by
-- key would read the whole table until autovacuum analyzed it again.
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM endpoints) THEN ANALYZE endpoints; END IF;
END $$;
