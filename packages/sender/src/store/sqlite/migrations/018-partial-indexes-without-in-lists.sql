-- The partial indexes over three statuses state their conditions as one comparison each (design
-- D71): SQLite evaluated an IN list of three constants by building a table of them, each time a
-- statement wrote a row those conditions are checked on, for the row before and after: four tables
-- for every attempt recorded, two for every delivery published. Same rows as before; the
-- statements that read through these indexes repeat their conditions (sql-rules.ts oneOfSql).
DROP INDEX deliveries_queued_by_endpoint;
CREATE INDEX deliveries_queued_by_endpoint ON deliveries (endpoint_id, status, next_attempt_at)
  WHERE (status = 'pending' OR status = 'awaiting_retry' OR status = 'held');
DROP INDEX deliveries_final;
CREATE INDEX deliveries_final ON deliveries (updated_at)
  WHERE (status = 'delivered' OR status = 'failed' OR status = 'skipped');
