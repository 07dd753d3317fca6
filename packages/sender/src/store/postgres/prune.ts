/** Retention: final deliveries last updated before the cutoff go, with the events left without any. */
import { FINAL_SQL } from '../sql-rules.js';
import type { Pg } from './connection.js';

const PRUNE_DELIVERIES = `DELETE FROM deliveries WHERE status IN ${FINAL_SQL} AND updated_at < $1`;
/** Leases whose delivery is gone (none in normal operation; there is no foreign key to cascade). */
const PRUNE_LEASES = `
DELETE FROM leases l WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = l.delivery_id)`;
const PRUNE_EVENTS = `
DELETE FROM events ev
WHERE ev.created_at < $1 AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = ev.id)`;

export async function pruneBefore(pg: Pg, cutoff: number): Promise<number> {
  return pg.tx(async (client) => {
    const removed = (await client.query(PRUNE_DELIVERIES, [cutoff])).rowCount ?? 0;
    await client.query(PRUNE_LEASES, []);
    await client.query(PRUNE_EVENTS, [cutoff]);
    return removed;
  });
}
