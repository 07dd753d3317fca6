import { useEffect, useRef } from 'preact/hooks';

/**
 * Loads now, then again every `everyMs` while the view is shown (null: once), whenever `deps`
 * change. Each tick runs the newest `load` and `paused`, never a closure of the render that set the
 * timer up, and skips the load while `paused()` says nothing can change.
 *
 * @example
 * usePolling(load, 2000, [id], () => final.current);
 */
export function usePolling(
  load: () => unknown,
  everyMs: number | null,
  deps: readonly unknown[],
  paused: () => boolean = () => false,
): void {
  const latest = useRef({ load, paused });
  latest.current = { load, paused };
  useEffect(() => {
    void latest.current.load();
    if (everyMs === null) return;
    const timer = setInterval(() => {
      if (!latest.current.paused()) void latest.current.load();
    }, everyMs);
    return () => clearInterval(timer);
  }, [...deps, everyMs]);
}
