-- An endpoint's deliveries in a statistics window are counted from `deliveries_by_endpoint`
-- (endpoint, status, id) over the ids made in the window: an id starts with its creation time
-- (endpoint-stats.ts). The index by creation time held the same rows a second time, and every
-- delivery's insert and status change wrote both (bench/store-cycle.mjs --sqlite: 0.93x the
-- store's CPU and 0.83x its write calls per delivery without it).
DROP INDEX deliveries_by_endpoint_created;
