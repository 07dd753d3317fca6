-- The due-time index holds each claimable delivery's lease expiry and status beside its due time,
-- so a claim steps past the deliveries in flight (the queue's first rows, leased until their
-- requests end) within the index, never reading their rows from the table: with 1,000 in flight
-- every claim read 1,000 rows to take 32, about 1.4 µs each. Same rows as before; a lease taken or
-- given back now moves its delivery's entry too.
DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, lease_expires_at, status)
  WHERE status IN ('pending', 'awaiting_retry');
