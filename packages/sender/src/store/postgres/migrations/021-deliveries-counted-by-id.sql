-- An endpoint's deliveries in a statistics window are counted from `deliveries_by_endpoint`
-- (endpoint, status, id) over the ids made in the window: an id starts with its creation time
-- (endpoint-stats.ts). The index by creation time held the same rows a second time, and every
-- delivery's insert and status change wrote an entry in both (bench/store-cycle.mjs: 25.3 WAL
-- records a delivery without it, against 27.4).
DROP INDEX deliveries_by_endpoint_created;
