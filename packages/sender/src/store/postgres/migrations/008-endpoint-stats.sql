-- Endpoint statistics (design D45): an endpoint's attempts and deliveries read by time from indexes
-- of their own, so a window costs the rows inside it, never the endpoint's whole history. Both
-- indexes include the columns the statistics read, for index-only scans.
ALTER TABLE attempts ADD COLUMN endpoint_id TEXT COLLATE "C";
UPDATE attempts a SET endpoint_id = d.endpoint_id FROM deliveries d WHERE d.id = a.delivery_id;
CREATE INDEX attempts_by_endpoint ON attempts (endpoint_id, started_at) INCLUDE (failure_kind, duration_ms);
CREATE INDEX deliveries_by_endpoint_created ON deliveries (endpoint_id, created_at) INCLUDE (status);
