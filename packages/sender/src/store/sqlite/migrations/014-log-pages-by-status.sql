-- The log's pages by account and by endpoint, keyed by status then id: a page filtered by status
-- reads one range of the index, the whole log one range per status merged (log-page-sql.ts), so a
-- page of three failed deliveries among a million delivered costs what a page costs. Keyed by id
-- alone, such a page read every delivery of the endpoint to find them, on the service's thread.
DROP INDEX deliveries_by_endpoint;
CREATE INDEX deliveries_by_endpoint ON deliveries (endpoint_id, status, id);
DROP INDEX deliveries_by_account;
CREATE INDEX deliveries_by_account ON deliveries (account_id, status, id);
