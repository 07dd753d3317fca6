import { useEffect, useState } from 'preact/hooks';
import {
  ApiError,
  api,
  DELIVERY_STATUSES,
  type Delivery,
  type Endpoint,
  EVENTS,
  FINAL_STATUSES,
} from './api.js';
import { EndpointName } from './endpoint-name.js';
import { attemptFailureMessage, FILTERED_ENDPOINT_GONE } from './messages.js';
import { linkProps, navigate } from './navigation.js';
import type { LogFilters } from './routes.js';
import { formatMoment } from './timeline.js';
import { usePolling } from './use-polling.js';

const LIVE_MS = 2000;

/**
 * The delivery log: filters and search kept in the address (routes.ts), cursor paging, and live
 * updates while on the first page.
 */
export function Deliveries({ filters }: { filters: LogFilters }) {
  const { endpoint, status, event, q } = filters;
  // The cursor of each page after the first, for the filters they were read under: a change of
  // filters starts again at the first page in the same render, so no request carries a cursor
  // read under other filters, and coming back to earlier filters starts at their first page too.
  const filtersKey = JSON.stringify([endpoint, status, event, q]);
  const [paging, setPaging] = useState({ filtersKey, cursors: [] as string[] });
  const [search, setSearch] = useState(q ?? '');
  // New filters: their first page, and the search in force back in the search box.
  if (paging.filtersKey !== filtersKey) {
    setPaging({ filtersKey, cursors: [] });
    setSearch(q ?? '');
  }
  const cursors = paging.filtersKey === filtersKey ? paging.cursors : [];
  const setCursors = (next: string[]) => setPaging({ filtersKey, cursors: next });
  const cursor = cursors.at(-1);
  // A page is shown only under the filters and cursor it was asked for: until the new one arrives,
  // the previous page (and its next cursor) is not on screen.
  const requestKey = JSON.stringify([filtersKey, cursor ?? null]);
  const [answer, setAnswer] = useState<{
    key: string;
    data: Delivery[];
    next_cursor: string | null;
  } | null>(null);
  const page = answer?.key === requestKey ? answer : null;
  const [endpoints, setEndpoints] = useState<Map<string, Endpoint>>(new Map());
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    api.endpoints().then(
      (list) => setEndpoints(new Map(list.map((e) => [e.id, e]))),
      () => {},
    );
  }, []);
  // Later pages stay still; the first follows new deliveries as they land.
  usePolling(
    () =>
      api.deliveries({
        ...(endpoint ? { endpointId: endpoint } : {}),
        ...(status ? { status } : {}),
        ...(event ? { event } : {}),
        ...(q ? { q } : {}),
        ...(cursor ? { cursor } : {}),
      }),
    (p) => {
      setAnswer({ key: requestKey, ...p });
      setError(null);
    },
    (err) =>
      setError(
        endpoint && err instanceof ApiError && err.code === 'not_found'
          ? FILTERED_ENDPOINT_GONE
          : err.message,
      ),
    cursor ? null : LIVE_MS,
    [requestKey],
  );

  const set = (key: keyof LogFilters, value: string) =>
    navigate({ name: 'log', filters: { ...filters, [key]: value || undefined } }, { replace: true });
  const now = Date.now();

  return (
    <section aria-labelledby="log-title">
      <h2 id="log-title">Delivery log</h2>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          set('q', search.trim());
        }}
      >
        <span class="field">
          <label for="filter-q">Search</label>
          <input
            id="filter-q"
            type="search"
            placeholder="event id, click_id or conversion_id"
            value={search}
            onInput={(e) => setSearch((e.target as HTMLInputElement).value)}
          />
          <button type="submit">Search</button>
        </span>
        <span class="field">
          <label for="filter-endpoint">Endpoint</label>
          <select
            id="filter-endpoint"
            value={endpoint ?? ''}
            onChange={(e) => set('endpoint', (e.target as HTMLSelectElement).value)}
          >
            <option value="">any</option>
            {[...endpoints.values()].map((e) => (
              <option key={e.id} value={e.id}>
                {e.description || e.url}
              </option>
            ))}
            {endpoint && !endpoints.has(endpoint) && <option value={endpoint}>{endpoint}</option>}
          </select>
        </span>
        <span class="field">
          <label for="filter-status">Status</label>
          <select
            id="filter-status"
            value={status ?? ''}
            onChange={(e) => set('status', (e.target as HTMLSelectElement).value)}
          >
            <option value="">any</option>
            {DELIVERY_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </span>
        <span class="field">
          <label for="filter-event">Event</label>
          <select
            id="filter-event"
            value={event ?? ''}
            onChange={(e) => set('event', (e.target as HTMLSelectElement).value)}
          >
            <option value="">any</option>
            {EVENTS.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </span>
        {!cursor && <span class="live">live</span>}
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {page && page.data.length === 0 && (
        <p>
          {q
            ? `No delivery of an event with the id, click_id or conversion_id “${q}”.`
            : page.next_cursor
              ? 'None among the deliveries read so far: Older reads further back.'
              : 'No delivery matches.'}
        </p>
      )}
      {page && page.data.length > 0 && (
        <table class="deliveries stack">
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Endpoint</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Next attempt or finished</th>
            </tr>
          </thead>
          <tbody>
            {page.data.map((d) => (
              <tr key={d.id} data-delivery={d.id} data-status={d.status}>
                <td data-label="Created">
                  <a class="open" {...linkProps({ name: 'delivery', id: d.id })}>
                    {formatMoment(Date.parse(d.created_at), now)}
                  </a>
                </td>
                <td data-label="Endpoint" class="endpoint-cell">
                  <EndpointName id={d.endpoint_id} endpoint={endpoints.get(d.endpoint_id)} />
                </td>
                <td data-label="Event">
                  {d.event}
                  {d.test && <span class="badge test">test</span>}
                </td>
                <td data-label="Status">
                  <span class={`badge ${d.status}`}>{d.status}</span>
                </td>
                <td data-label="Attempts" class="attempts">
                  {d.attempts}
                </td>
                <td data-label="Last answer" title={lastAnswerTitle(d)}>
                  {d.last_status_code ?? d.last_failure_kind ?? '—'}
                </td>
                <td data-label="Next or finished" class="when">
                  {whenText(d, endpoints.get(d.endpoint_id), now)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="paging" aria-label="Pages">
        <button
          type="button"
          disabled={cursors.length === 0}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Newer
        </button>
        <button
          type="button"
          disabled={!page?.next_cursor}
          onClick={() => page?.next_cursor && setCursors([...cursors, page.next_cursor])}
        >
          Older
        </button>
      </nav>
    </section>
  );
}

const lastAnswerTitle = (d: Delivery) =>
  attemptFailureMessage({
    failure_kind: d.last_failure_kind,
    status_code: d.last_status_code,
    error_message: null,
    next_attempt_at: d.next_attempt_at,
  }) ?? '';

/** When the next attempt is due, or when the delivery ended; never a time past for one that waits. */
function whenText(d: Delivery, endpoint: Endpoint | undefined, now: number): string {
  if (FINAL_STATUSES.has(d.status)) return `finished ${formatMoment(Date.parse(d.updated_at), now)}`;
  if (d.status === 'held' || endpoint?.paused || (endpoint && !endpoint.enabled))
    return endpoint?.paused ? 'when resumed' : 'when re-enabled';
  if (!d.next_attempt_at) return '—';
  const due = Date.parse(d.next_attempt_at);
  return due <= now ? 'due now' : `next ${formatMoment(due, now)}`;
}
