-- Deleting an endpoint marks it first (deleted_at), then removes its deliveries a bounded step at a
-- time (delete-endpoint.ts): the mark makes it gone for every endpoint route and for fan-out at
-- once. The partial index finds deletions cut short, to finish them (pruneLog).
ALTER TABLE endpoints ADD COLUMN deleted_at bigint;
CREATE INDEX endpoints_being_deleted ON endpoints (id) WHERE deleted_at IS NOT NULL;
