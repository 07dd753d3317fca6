-- Deliveries and attempts keep no foreign keys. Each key ran a trigger that looked its parent row
-- up for every delivery and attempt written (design D60: the store's database CPU per delivery
-- 1.06-1.11x with them). The writers hold what the keys checked already: a publish inserts
-- deliveries only for the endpoints it holds share-locked and for the events it inserts in the
-- same statement (publish.ts), and a record inserts an attempt only for a delivery it holds locked
-- (record-attempt.ts). What the cascades removed, the deletions remove themselves
-- (delete-deliveries.ts, prune.ts).
ALTER TABLE deliveries DROP CONSTRAINT deliveries_event_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_endpoint_id_fkey;
ALTER TABLE attempts DROP CONSTRAINT attempts_delivery_id_fkey;
