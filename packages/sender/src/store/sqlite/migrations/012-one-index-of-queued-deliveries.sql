-- The metrics count queued deliveries from the per-endpoint index of them (migration 6), which holds
-- the same rows: a second index of them cost every publish an entry and every attempt that ends
-- one a deletion.
DROP INDEX deliveries_queued;
