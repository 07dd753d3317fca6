-- Each endpoint's queued deliveries by due time (status last, so counts by status and the walks of
-- pausing and re-enabling read the index alone). A claim reads it when the front of the due-time
-- index is held by deliveries it may not take now (their endpoint, account or origin at its limit):
-- each other endpoint's first due deliveries, so one tenant's backlog never stands between another
-- tenant and its next delivery. Same rows as before, so the same writes.
DROP INDEX deliveries_queued_by_endpoint;
CREATE INDEX deliveries_queued_by_endpoint ON deliveries (endpoint_id, next_attempt_at, status)
  WHERE status IN ('pending', 'awaiting_retry', 'held');
