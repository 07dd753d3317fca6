-- Standard Webhooks per endpoint (design D32), the previous secret of a rotation with the time its
-- grace ends (design D38; encrypted like the secret when a master key is set, design D18), and the
-- mark of a test delivery (design D42). Numbers may have gaps: the runner applies every version
-- not yet recorded.
ALTER TABLE endpoints ADD COLUMN standard_webhooks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN previous_secret TEXT;
ALTER TABLE endpoints ADD COLUMN previous_secret_expires_at INTEGER;
ALTER TABLE deliveries ADD COLUMN test INTEGER NOT NULL DEFAULT 0;
