-- Each endpoint's queued deliveries by status, then due time. A claim reads it when the front of
-- the due-time index is held by deliveries it may not take now (their endpoint, account or origin
-- at its limit): each other endpoint's first due deliveries of each claimable status, so one
-- tenant's backlog never stands between another tenant and its next delivery. Pausing, resuming and
-- re-enabling still seek the status they move. Same rows as before, so the same writes.
DROP INDEX deliveries_queued_by_endpoint;
CREATE INDEX deliveries_queued_by_endpoint ON deliveries (endpoint_id, status, next_attempt_at)
  WHERE status IN ('pending', 'awaiting_retry', 'held');
