-- What re-enabling with a replay walks (design D3): an endpoint's skipped deliveries, never its
-- whole log. The statements that read it name it (INDEXED BY), so the plan cannot drift to a scan.
CREATE INDEX deliveries_skipped ON deliveries (endpoint_id) WHERE status = 'skipped';
