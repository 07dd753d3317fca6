-- What the metrics count and what retention walks, each read from an index of its own, so a scrape
-- and a prune cost what is queued or due for deletion, never the whole log.
CREATE INDEX deliveries_queued ON deliveries (status) WHERE status IN ('pending', 'awaiting_retry', 'held');
CREATE INDEX endpoints_disabled ON endpoints (id) WHERE enabled = 0;
CREATE INDEX events_by_created ON events (created_at, id);
