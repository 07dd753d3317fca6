-- Deleting an endpoint marks it first (deleted_at), then removes its deliveries a bounded step at a
-- time (delete-endpoint.ts): the mark makes it gone for every endpoint route and for fan-out at
-- once. The deletions under way are also listed in a table of their own, which every claim reads
-- (claim-due.ts, full_endpoints) and the pruning reads to finish those cut short: a partial index
-- on deleted_at would do, but without statistics of the new column (a table that rarely changes
-- may not be analyzed for long) the planner takes most endpoints for marked, and each claim read
-- every endpoint.
ALTER TABLE endpoints ADD COLUMN deleted_at bigint;
CREATE TABLE endpoints_being_deleted (
  id text PRIMARY KEY,
  account_id text NOT NULL
);
