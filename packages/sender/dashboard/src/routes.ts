/**
 * The dashboard's addresses (design D48): every view has a path under /dashboard, so Back works,
 * a link can be shared and a reload keeps the view. Pure: a location in, a view out, and back.
 */

export interface LogFilters {
  endpoint?: string;
  status?: string;
  event?: string;
  q?: string;
}

export type View =
  | { name: 'endpoints' }
  | { name: 'endpoint'; id: string }
  | { name: 'log'; filters: LogFilters }
  | { name: 'delivery'; id: string };

const BASE = '/dashboard';
const FILTER_KEYS = ['endpoint', 'status', 'event', 'q'] as const;

/** The view a path and query name; an unknown path shows the endpoints. */
export function viewOf(pathname: string, search: string): View {
  const parts = pathname.replace(/\/+$/, '').split('/').slice(2).map(decodeURIComponent);
  if (parts[0] === 'log' && parts.length === 1) {
    const params = new URLSearchParams(search);
    const filters: LogFilters = {};
    for (const key of FILTER_KEYS) {
      const value = params.get(key);
      if (value) filters[key] = value;
    }
    return { name: 'log', filters };
  }
  if (parts[0] === 'deliveries' && parts[1] && parts.length === 2) return { name: 'delivery', id: parts[1] };
  if (parts[0] === 'endpoints' && parts[1] && parts.length === 2) return { name: 'endpoint', id: parts[1] };
  return { name: 'endpoints' };
}

/** The path (with its query) of a view. */
export function pathOf(view: View): string {
  switch (view.name) {
    case 'endpoints':
      return BASE;
    case 'endpoint':
      return `${BASE}/endpoints/${encodeURIComponent(view.id)}`;
    case 'delivery':
      return `${BASE}/deliveries/${encodeURIComponent(view.id)}`;
    case 'log': {
      const params = new URLSearchParams();
      for (const key of FILTER_KEYS) {
        const value = view.filters[key];
        if (value) params.set(key, value);
      }
      const query = params.toString();
      return query ? `${BASE}/log?${query}` : `${BASE}/log`;
    }
  }
}
