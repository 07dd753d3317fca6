/**
 * Collects calls that arrive together and runs them as one batch: the first call of a quiet moment
 * schedules a flush on the next turn of the event loop, and calls made while a flush is running go
 * into the next one. So under load one transaction (or one round trip) carries what arrived during
 * the previous one, and a lone call waits one turn at most.
 */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * `flush` answers each item of the batch in order; if it throws, every item of the batch is
 * rejected with that error.
 *
 * @example
 * const record = createBatcher((items: Row[]) => writeAll(items).map((value) => ({ ok: true, value })));
 * await record(row);
 */
export function createBatcher<I, R>(
  flush: (items: I[]) => Promise<Settled<R>[]> | Settled<R>[],
  /** The most items one flush takes: bounds how long one transaction holds the database (and SQLite the event loop). */
  max = 256,
): (item: I) => Promise<R> {
  type Waiting = { item: I; resolve: (value: R) => void; reject: (error: unknown) => void };
  const queue: Waiting[] = [];
  let flushing = false;

  async function drain() {
    flushing = true;
    while (queue.length > 0) {
      const batch = queue.splice(0, max);
      try {
        const results = await flush(batch.map((w) => w.item));
        for (const [i, w] of batch.entries()) {
          const r = results[i]!;
          if (r.ok) w.resolve(r.value);
          else w.reject(r.error);
        }
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    flushing = false;
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!flushing && queue.length === 1) setImmediate(() => void drain());
    });
}
