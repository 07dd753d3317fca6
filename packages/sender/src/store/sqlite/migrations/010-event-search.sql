-- Log search (design D47): the click and conversion ids an event carries, copied out of its body at
-- publish, so a search by either reads an index, never the events' bytes.
ALTER TABLE events ADD COLUMN click_id TEXT;
ALTER TABLE events ADD COLUMN conversion_id TEXT;
UPDATE events
SET click_id = json_extract(CAST(body AS TEXT), '$.data.click_id'),
    conversion_id = json_extract(CAST(body AS TEXT), '$.data.conversion_id')
WHERE name IN ('click', 'conversion');
CREATE INDEX events_by_click ON events (account_id, click_id) WHERE click_id IS NOT NULL;
CREATE INDEX events_by_conversion ON events (account_id, conversion_id) WHERE conversion_id IS NOT NULL;
