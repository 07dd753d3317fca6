-- Standard Webhooks per endpoint (design D32), the previous secret of a rotation with the time its
-- grace ends (design D38; encrypted like the secret when a master key is set, design D18), and the
-- mark of a test delivery (design D42). A constant default adds a column without rewriting the
-- table. Numbers may have gaps: the runner applies every version not yet recorded.
ALTER TABLE endpoints ADD COLUMN standard_webhooks BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE endpoints ADD COLUMN previous_secret TEXT;
ALTER TABLE endpoints ADD COLUMN previous_secret_expires_at BIGINT;
ALTER TABLE deliveries ADD COLUMN test BOOLEAN NOT NULL DEFAULT false;
