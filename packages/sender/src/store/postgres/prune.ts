/**
 * Retention (design D16): final deliveries last updated before the cutoff go, and events older
 * than the cutoff left without any, in steps (prune-steps.ts), each its own short transaction; the
 * events' walk goes on from where the last pass ended (event-walk.ts).
 */
import type { EventWalks } from '../event-walk.js';
import { inSteps, PRUNE_STEP } from '../prune-steps.js';
import { FINAL_SQL } from '../sql-rules.js';
import type { Pg } from './connection.js';
import { deleteDeliveriesSql } from './delete-deliveries.js';

/**
 * Their attempts and leases go with them, in the same statement (not locked first, as
 * delete-deliveries.ts does elsewhere): a final delivery holds no lease, and one made claimable
 * again since this statement's snapshot (retry now, recovery, a replay) and attempted has its
 * `updated_at` past the cutoff, so the lock's check of its newest version passes it over. Rows
 * locked by others are passed over too, for the next step.
 */
const PRUNE_DELIVERIES = deleteDeliveriesSql(`id IN (
  SELECT id FROM deliveries WHERE status IN ${FINAL_SQL} AND updated_at < $1
  ORDER BY updated_at LIMIT ${PRUNE_STEP} FOR UPDATE SKIP LOCKED)`);
/** The next step of old events after ($2, $3), deleting those without deliveries. */
const PRUNE_EVENTS = `
WITH step AS (
  SELECT id, created_at FROM events
  WHERE created_at < $1 AND (created_at, id) > ($2::bigint, $3::text)
  ORDER BY created_at, id LIMIT ${PRUNE_STEP}
),
gone AS (
  DELETE FROM events ev USING step
  WHERE ev.id = step.id AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = ev.id)
)
SELECT count(*)::int AS n, max(created_at) AS at, max(id) FILTER (WHERE created_at = (SELECT max(created_at) FROM step)) AS id
FROM step`;

/** Leases whose delivery is gone (none in normal operation; there is no foreign key to cascade). */
const PRUNE_ORPHAN_LEASES = `
DELETE FROM leases l WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = l.delivery_id)`;

/** `walks`: the store's walk of old events, kept between passes. */
export async function pruneBefore(pg: Pg, walks: EventWalks, cutoff: number): Promise<number> {
  const removed = await inSteps(async () => Number((await pg.rows(PRUNE_DELIVERIES, [cutoff]))[0]?.n ?? 0));
  const after = walks.start(cutoff);
  await inSteps(async () => {
    const [row] = await pg.rows(PRUNE_EVENTS, [cutoff, after.at, after.id]);
    const n = Number(row?.n ?? 0);
    if (n > 0) {
      after.at = Number(row!.at);
      after.id = row!.id as string;
    }
    return n;
  });
  await pg.rows(PRUNE_ORPHAN_LEASES, []);
  return removed;
}
