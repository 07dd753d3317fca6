-- Previous secrets past their grace are dropped hourly (design D38): found through this index of
-- the endpoints holding one, where the hourly job read every endpoint's row on the event loop.
CREATE INDEX endpoints_secret_expiring ON endpoints (previous_secret_expires_at)
  WHERE previous_secret_expires_at IS NOT NULL;
