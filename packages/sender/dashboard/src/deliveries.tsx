import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type Delivery, EVENTS, STATUSES } from './api.js';

const LIVE_MS = 2000;

/** The delivery log: filters, cursor paging, and live updates while on the first page. */
export function Deliveries({ endpointId, onOpen }: { endpointId?: string; onOpen: (id: string) => void }) {
  const [status, setStatus] = useState('');
  const [event, setEvent] = useState('');
  const [cursors, setCursors] = useState<string[]>([]); // the cursor of each page after the first
  const [page, setPage] = useState<{ data: Delivery[]; next_cursor: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const cursor = cursors.at(-1);

  const load = useCallback(
    () =>
      api
        .deliveries({
          ...(endpointId ? { endpointId } : {}),
          ...(status ? { status } : {}),
          ...(event ? { event } : {}),
          ...(cursor ? { cursor } : {}),
        })
        .then(
          (p) => {
            setPage(p);
            setError(null);
          },
          (err: Error) => setError(err.message),
        ),
    [endpointId, status, event, cursor],
  );

  useEffect(() => {
    void load();
    if (cursor) return; // later pages stay still; the first follows new deliveries as they land
    const timer = setInterval(() => void load(), LIVE_MS);
    return () => clearInterval(timer);
  }, [load, cursor]);

  const filter = (set: (v: string) => void) => (e: Event) => {
    set((e.target as HTMLSelectElement).value);
    setCursors([]);
  };

  return (
    <section aria-labelledby="log-title">
      <h2 id="log-title">Delivery log{endpointId ? ` — ${endpointId}` : ''}</h2>
      <div class="filters">
        <label for="filter-status">Status</label>
        <select id="filter-status" value={status} onChange={filter(setStatus)}>
          <option value="">any</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <label for="filter-event">Event</label>
        <select id="filter-event" value={event} onChange={filter(setEvent)}>
          <option value="">any</option>
          {EVENTS.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
        {!cursor && <span class="live">live</span>}
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {page && page.data.length === 0 && <p>No delivery matches.</p>}
      {page && page.data.length > 0 && (
        <table class="deliveries">
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Next attempt</th>
            </tr>
          </thead>
          <tbody>
            {page.data.map((d) => (
              <tr key={d.id} data-delivery={d.id} data-status={d.status}>
                <td>
                  <button type="button" class="link" onClick={() => onOpen(d.id)}>
                    {new Date(d.created_at).toLocaleTimeString()}
                  </button>
                </td>
                <td>
                  {d.event}
                  {d.test && <span class="badge test">test</span>}
                </td>
                <td>
                  <span class={`badge ${d.status}`}>{d.status}</span>
                </td>
                <td class="attempts">{d.attempts}</td>
                <td>{d.last_status_code ?? d.last_failure_kind ?? '—'}</td>
                <td>
                  {d.status === 'held'
                    ? 'when re-enabled'
                    : d.next_attempt_at
                      ? new Date(d.next_attempt_at).toLocaleTimeString()
                      : '—'}
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
