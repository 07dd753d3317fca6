-- An endpoint's origin (scheme, host and port), what a claim counts per server (design D25).
-- Endpoint URLs are stored normalised and HTTPS only, so the origin is everything before the first
-- '/' after the scheme; a test holds it equal to the URL parser's origin.
ALTER TABLE endpoints ADD COLUMN origin TEXT COLLATE "C" GENERATED ALWAYS AS (substring(url from '^[a-z]+://[^/]+')) STORED;
-- A claim leaves out the endpoints of an origin at the claimer's share.
CREATE INDEX endpoints_by_origin ON endpoints (origin);
