-- Each endpoint's next due time, never later than its earliest claimable delivery's: a claim held
-- up by one tenant's backlog reads the endpoints with something due here, in due order (claim-due.ts
-- DUE_ENDPOINTS), so endpoints whose queued deliveries are not due yet cost it nothing. Writes that
-- make a delivery claimable or due sooner lower an entry; an attempt, or a claim that finds nothing
-- to take behind one, moves it on or drops it (endpoint-due.ts).
CREATE TABLE endpoint_due (
  endpoint_id TEXT PRIMARY KEY REFERENCES endpoints (id) ON DELETE CASCADE,
  next_due_at INTEGER NOT NULL
);
-- Filled from the queued deliveries by every migrate, this one's included (rebuildDue).
CREATE INDEX endpoint_due_by_time ON endpoint_due (next_due_at);
