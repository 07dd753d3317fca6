import { useEffect, useRef } from 'preact/hooks';

/**
 * Loads now, then again every `everyMs` while the view is shown (null: once), whenever `deps`
 * change. Each tick runs the newest `load` and `paused`, never a closure of the render that set the
 * timer up, and skips the load while `paused()` says nothing can change. `load` is given
 * `current()`, false once its answer would be stale (the deps changed or the view went).
 *
 * @example
 * usePolling(load, 2000, [id], () => final.current);
 */
export function usePolling(
  load: (current: () => boolean) => unknown,
  everyMs: number | null,
  deps: readonly unknown[],
  paused: () => boolean = () => false,
): void {
  const latest = useRef({ load, paused });
  latest.current = { load, paused };
  useEffect(() => {
    // Until `deps` change or the view goes: an answer that arrives after that is for something no
    // longer shown, and `load` drops it.
    let live = true;
    const current = () => live;
    void latest.current.load(current);
    const timer =
      everyMs === null
        ? undefined
        : setInterval(() => {
            if (!latest.current.paused()) void latest.current.load(current);
          }, everyMs);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [...deps, everyMs]);
}
