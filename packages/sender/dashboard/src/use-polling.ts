import { useLayoutEffect, useRef } from 'preact/hooks';

/** How long an unanswered read holds back the ticks after it. */
const UNANSWERED_MS = 30_000;

/**
 * Reads now, then again every `everyMs` while the view is shown (null: once), and whenever `deps`
 * change, skipping a tick while `paused()` says nothing can change or, for up to UNANSWERED_MS, the
 * last read is still unanswered (a slow read, such as a search waiting its turn, is not asked again
 * and again; one that never ends does not stop the view). Each answer goes to `answered`,
 * each error to `failed`, unless it has gone stale: it arrived after the deps changed or the view
 * went, or after the answer of a later read. Each tick runs the newest functions given, never a
 * closure of the render that set the timer up. Returns `reload`: a read now, answered the same way
 * (after an action changed what is shown).
 *
 * @example
 * const reload = usePolling(() => api.delivery(id), setDetail, (e) => setError(e.message), 2000, [id]);
 */
export function usePolling<T>(
  read: () => Promise<T>,
  answered: (value: T) => void,
  failed: (error: Error) => void,
  everyMs: number | null,
  deps: readonly unknown[],
  paused: () => boolean = () => false,
): () => Promise<void> {
  const latest = useRef({ read, answered, failed, paused });
  latest.current = { read, answered, failed, paused };
  // The reads of the current deps: numbered as sent, and the number of the last one answered.
  const round = useRef({ live: false, sent: 0, shown: 0, waiting: 0 });
  const reload = useRef(async () => {
    const r = round.current;
    const n = ++r.sent;
    const fresh = () => {
      if (!r.live || n < r.shown) return false;
      r.shown = n;
      return true;
    };
    r.waiting++;
    try {
      const value = await latest.current.read();
      if (fresh()) latest.current.answered(value);
    } catch (error) {
      if (fresh()) latest.current.failed(error as Error);
    } finally {
      r.waiting--;
    }
  });
  // A layout effect: it runs in the same commit as the render that changed the deps. A passive
  // effect runs later, after paint, and an answer to the old deps landing in between would reach
  // the new render's `answered` while the old round was still live.
  useLayoutEffect(() => {
    const r = { live: true, sent: 0, shown: 0, waiting: 0 };
    let skipped = 0;
    round.current = r;
    void reload.current();
    const timer =
      everyMs === null
        ? undefined
        : setInterval(() => {
            if (r.waiting > 0 && (skipped + 1) * everyMs < UNANSWERED_MS) {
              skipped++;
              return;
            }
            skipped = 0;
            if (!latest.current.paused()) void reload.current();
          }, everyMs);
    return () => {
      r.live = false;
      clearInterval(timer);
    };
  }, [...deps, everyMs]);
  return reload.current;
}
