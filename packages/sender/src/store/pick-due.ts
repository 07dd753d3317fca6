/**
 * Which due deliveries a claim leases (design I6), for the stores that pick in the process
 * (memory, SQLite; PostgreSQL ranks in its claim statement to save round trips): in due order, at
 * most `cap` in flight per endpoint counting the `inFlight` ones, at most `limit` in all. A delivery
 * whose endpoint is full is passed over, never waited on, so a hanging endpoint cannot hold up the
 * others. It reads `due` lazily and stops at `limit`, so a store can hand it a cursor.
 */
export function pickDue<T>(
  due: Iterable<T>,
  endpointOf: (delivery: T) => string,
  inFlight: ReadonlyMap<string, number>,
  cap: number,
  limit: number,
): T[] {
  const picked: T[] = [];
  if (limit <= 0) return picked;
  const counts = new Map(inFlight);
  for (const delivery of due) {
    const endpoint = endpointOf(delivery);
    const n = counts.get(endpoint) ?? 0;
    if (n >= cap) continue;
    counts.set(endpoint, n + 1);
    picked.push(delivery);
    if (picked.length >= limit) break;
  }
  return picked;
}
