/** The History API behind the dashboard's addresses (routes.ts): the current view, and moving to another. */
import { useEffect, useState } from 'preact/hooks';
import { pathOf, type View, viewOf } from './routes.js';

const current = () => viewOf(location.pathname, location.search);

/**
 * Going to a view adds a history entry; `replace` changes the current one instead (a filter
 * typed in the log), so Back leaves the log rather than undoing each keystroke.
 */
export function navigate(view: View, options: { replace?: boolean } = {}): void {
  const path = pathOf(view);
  if (`${location.pathname}${location.search}` === path) return;
  if (options.replace) history.replaceState(history.state, '', path);
  else history.pushState({ from: `${location.pathname}${location.search}` }, '', path);
  dispatchEvent(new Event('dashboard:navigate'));
}

/** The view of the address bar, following Back, Forward and `navigate`. */
export function useView(): View {
  const [view, setView] = useState<View>(current);
  useEffect(() => {
    const follow = () => setView(current());
    addEventListener('popstate', follow);
    addEventListener('dashboard:navigate', follow);
    return () => {
      removeEventListener('popstate', follow);
      removeEventListener('dashboard:navigate', follow);
    };
  }, []);
  return view;
}

/** A link to a view: a real href (open in a new tab, copy), followed in place on a plain click. */
export function linkProps(view: View) {
  return {
    href: pathOf(view),
    onClick: (e: MouseEvent) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      navigate(view);
    },
  };
}

/** The address this history entry was opened from inside the dashboard, if it was (kept across reloads). */
export function cameFrom(): string | null {
  const from = (history.state as { from?: unknown } | null)?.from;
  return typeof from === 'string' ? from : null;
}
