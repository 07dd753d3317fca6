-- An endpoint's origin (scheme, host and port), what a claim counts per server (design D25).
-- Endpoint URLs are stored normalised and HTTPS only, so the origin is everything before the first
-- '/' after 'https://' (its 8 characters); a test holds it equal to the URL parser's origin.
ALTER TABLE endpoints ADD COLUMN origin TEXT GENERATED ALWAYS AS (
  CASE WHEN instr(substr(url, 9), '/') > 0 THEN substr(url, 1, instr(substr(url, 9), '/') + 7) ELSE url END
) VIRTUAL;
