-- Deliveries and attempts keep no foreign keys. Each key checked its parent row for every delivery
-- and attempt written, a trigger and a row lock each (every publish share-locking the same endpoint
-- rows at once): a sixth of a publish's time and a fifth of an attempt record's. The writers hold
-- what the keys checked already: a publish inserts deliveries only for the endpoints it holds
-- share-locked and for the events it inserts in the same statement (publish.ts), and a record
-- inserts an attempt only for a delivery it holds locked (record-attempt.ts). What the cascades
-- removed, the deletions remove themselves (delete-deliveries.ts).
ALTER TABLE deliveries DROP CONSTRAINT deliveries_event_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_endpoint_id_fkey;
ALTER TABLE attempts DROP CONSTRAINT attempts_delivery_id_fkey;
