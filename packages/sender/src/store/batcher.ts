/**
 * Collects calls that arrive together and runs them as one batch: the first call of a quiet moment
 * schedules a flush on the next turn of the event loop, and calls made while a flush is running go
 * into the next one. So under load one transaction (or one round trip) carries what arrived during
 * the previous one, and a lone call waits one turn at most.
 */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * `flush` answers each item of the batch in order; if it throws, every item of the batch is
 * rejected with that error. It may answer only the first items (at least one), when it ran out of
 * the time it may hold the event loop: the rest go first into the next flush. Every flush waits a
 * turn of the loop after the one before, so requests waiting on it are served in between.
 *
 * @example
 * const record = createBatcher((items: Row[]) => writeAll(items).map((value) => ({ ok: true, value })));
 * await record(row);
 */
export function createBatcher<I, R>(
  flush: (items: I[]) => Promise<Settled<R>[]> | Settled<R>[],
  /** The most items one flush takes: bounds how long one transaction holds the database. */
  max = 256,
): (item: I) => Promise<R> {
  type Waiting = { item: I; resolve: (value: R) => void; reject: (error: unknown) => void };
  const queue: Waiting[] = [];
  let flushing = false;

  async function drain() {
    flushing = true;
    while (queue.length > 0) {
      const batch = queue.splice(0, max);
      let answered = batch.length;
      try {
        const results = await flush(batch.map((w) => w.item));
        if (results.length === 0) throw new Error('a batch flush answered none of its items');
        answered = Math.min(results.length, batch.length);
        for (let i = 0; i < answered; i++) {
          const r = results[i]!;
          if (r.ok) batch[i]!.resolve(r.value);
          else batch[i]!.reject(r.error);
        }
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
      if (answered < batch.length) queue.unshift(...batch.slice(answered));
      // Whatever is left waits a turn, as a lone call does: a flush that came back within its time
      // with more than `max` queued behind it would otherwise run the next at once, and a burst of
      // calls would hold the loop for one flush per `max` of them.
      if (queue.length > 0) await new Promise((resolve) => setImmediate(resolve));
    }
    flushing = false;
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!flushing && queue.length === 1) setImmediate(() => void drain());
    });
}
