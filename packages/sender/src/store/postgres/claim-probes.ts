/**
 * The probes of endpoints whose circuit breaker is half-open (design D27): one delivery each, its
 * earliest due retry before its earliest new delivery (PROBE_ORDER), of an endpoint enabled and not
 * paused (one whose deliveries are being held may have some not held yet) with
 * no delivery in flight.
 */
import { PROBE_ORDER } from '../../domain/breaker.js';
import type { ProbeRequest } from '../port.js';
import type { ClaimedDelivery } from '../records.js';
import { QUEUED_SQL } from '../sql-rules.js';
import { CLAIMED_COLUMNS, claimedOf, LEASE_PICKED } from './claim-due.js';
import type { Pg } from './connection.js';

/**
 * `$1` now, `$2` the endpoints, `$3` the statuses in the order they are preferred (PROBE_ORDER),
 * `$4` lease ms. Each endpoint's first due delivery of each status is a seek into its queued
 * deliveries by status and due time (migration 17), the status sought beside the queued list as in
 * CLAIM_DUE's `heads`, so only that index can be proven to hold the rows. An endpoint with a live
 * lease is passed over (`leases` holds only what is in flight). The rows are locked as CLAIM_DUE's
 * are, SKIP LOCKED, and a lease another claimer committed meanwhile is taken over only once it has
 * expired, so no delivery is leased twice; claimers racing on one endpoint can each lease one of its
 * deliveries, as CLAIM_DUE's can exceed a cap briefly.
 */
export const CLAIM_PROBES = `
WITH live AS MATERIALIZED (SELECT endpoint_id FROM leases WHERE expires_at > $1::bigint),
probe AS (
  SELECT p.id
  FROM (SELECT DISTINCT endpoint_id FROM unnest($2::text[]) AS q (endpoint_id)) q
  CROSS JOIN LATERAL (
    SELECT d.id FROM unnest($3::text[]) WITH ORDINALITY AS s (status, n)
    CROSS JOIN LATERAL (
      SELECT d.id FROM deliveries d
      WHERE d.endpoint_id = q.endpoint_id
        AND d.status IN ${QUEUED_SQL}
        AND d.status = s.status
        AND d.next_attempt_at <= $1::bigint
      ORDER BY d.next_attempt_at
      LIMIT 1
    ) d
    ORDER BY s.n
    LIMIT 1
  ) p
  WHERE q.endpoint_id NOT IN (SELECT endpoint_id FROM live)
    AND EXISTS (SELECT 1 FROM endpoints e WHERE e.id = q.endpoint_id AND e.enabled AND NOT e.paused)
),
picked AS MATERIALIZED (
  SELECT ${CLAIMED_COLUMNS}, gen_random_uuid()::text AS token
  FROM deliveries d
  WHERE d.id = ANY (ARRAY(SELECT id FROM probe))
    AND d.status = ANY ($3::text[])
    AND d.next_attempt_at <= $1::bigint
  FOR NO KEY UPDATE OF d SKIP LOCKED
),
${LEASE_PICKED}
SELECT * FROM claimed ORDER BY next_attempt_at, id`;

export async function claimProbes(
  pg: Pg,
  { now, leaseMs, endpointIds }: ProbeRequest,
): Promise<ClaimedDelivery[]> {
  if (endpointIds.length === 0) return [];
  const rows = await pg.prepared('claim_probes', CLAIM_PROBES, [now, endpointIds, PROBE_ORDER, leaseMs]);
  return claimedOf(pg, rows);
}
