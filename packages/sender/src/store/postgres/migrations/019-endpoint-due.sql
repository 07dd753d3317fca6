-- Each endpoint's next due time, never later than its earliest claimable delivery's: a claim held
-- up by one tenant's backlog reads the endpoints with something due here, in due order (claim-due.ts),
-- so endpoints whose queued deliveries are not due yet cost it nothing (it sought into every
-- endpoint with queued deliveries: 157 ms a claim at 20,000 endpoints holding a retry each). Writes
-- that make a delivery claimable or due sooner lower an entry; a held-up claim that finds nothing
-- to take behind one has it moved on or dropped (endpoint-due.ts).
CREATE TABLE endpoint_due (
  endpoint_id TEXT COLLATE "C" PRIMARY KEY REFERENCES endpoints (id) ON DELETE CASCADE,
  next_due_at BIGINT NOT NULL
);
-- Filled from the queued deliveries by every migrate, this one's included (endpoint-due.ts REPAIR_DUE).
CREATE INDEX endpoint_due_by_time ON endpoint_due (next_due_at);
