-- Endpoint statistics (design D45): an endpoint's attempts and deliveries read by time from indexes
-- of their own, so a window costs the rows inside it, never the endpoint's whole history. Both
-- indexes carry the columns the statistics read, so the table rows are not visited.
ALTER TABLE attempts ADD COLUMN endpoint_id TEXT;
UPDATE attempts SET endpoint_id = (SELECT d.endpoint_id FROM deliveries d WHERE d.id = attempts.delivery_id);
CREATE INDEX attempts_by_endpoint ON attempts (endpoint_id, started_at, failure_kind, duration_ms);
CREATE INDEX deliveries_by_endpoint_created ON deliveries (endpoint_id, created_at, status);
