import { useRef, useState } from 'preact/hooks';
import { ApiError, api, type Endpoint } from './api.js';
import { EndpointRow } from './endpoints.js';
import { recoveredNote } from './messages.js';
import { linkProps, navigate } from './navigation.js';
import { StatsPanel } from './stats-panel.js';
import { usePolling } from './use-polling.js';

/** One endpoint: its settings and actions, pause, resume and recovery, and its statistics. */
export function EndpointPage({ id }: { id: string }) {
  const [endpoint, setEndpoint] = useState<Endpoint | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Whether this endpoint was shown: a ref, so the answer of a read started before it was still counts.
  const shown = useRef(false);
  const reload = usePolling(
    () => api.endpoint(id),
    (e) => {
      shown.current = true;
      setEndpoint(e);
      setError(null);
    },
    // Deleted while shown (here or elsewhere): back to the list; never found: say so.
    (err) =>
      shown.current && err instanceof ApiError && err.code === 'not_found'
        ? navigate({ name: 'endpoints' })
        : setError(err.message),
    5000,
    [id],
  );
  if (error)
    return (
      <p role="alert" class="error">
        {error}
      </p>
    );
  if (!endpoint) return <p>Loading…</p>;
  return (
    <section aria-labelledby="endpoint-title">
      <a class="back" {...linkProps({ name: 'endpoints' })}>
        ← All endpoints
      </a>
      <h2 id="endpoint-title">{endpoint.description || 'Endpoint'}</h2>
      <ul class="endpoints">
        <EndpointRow endpoint={endpoint} onChanged={reload}>
          <Operations endpoint={endpoint} onChanged={setEndpoint} />
        </EndpointRow>
      </ul>
      <StatsPanel endpointId={endpoint.id} />
    </section>
  );
}

/** A `datetime-local` value (the browser's time zone) as the API's ISO 8601 UTC. */
const isoOf = (local: string) => new Date(local).toISOString();

/** Pause and resume (design D34), and recovery of failed deliveries over a range (design D35). */
function Operations({ endpoint, onChanged }: { endpoint: Endpoint; onChanged: (e: Endpoint) => void }) {
  const [since, setSince] = useState('');
  const [until, setUntil] = useState('');
  const [note, setNote] = useState<string | null>(null);
  const run = (work: () => Promise<string>) => work().then(setNote, (err: Error) => setNote(err.message));
  return (
    <div class="operations">
      <div class="actions">
        {endpoint.status === 'active' && (
          <button
            type="button"
            onClick={() =>
              run(async () => {
                onChanged(await api.pause(endpoint.id));
                return 'Paused: deliveries wait, unattempted, until you resume.';
              })
            }
          >
            Pause
          </button>
        )}
        {endpoint.status === 'paused' && (
          <button
            type="button"
            onClick={() =>
              run(async () => {
                onChanged(await api.resume(endpoint.id));
                return 'Resumed: what waited is being delivered.';
              })
            }
          >
            Resume
          </button>
        )}
      </div>
      <form
        class="recover"
        aria-label="Recover failed deliveries"
        onSubmit={(e) => {
          e.preventDefault();
          run(async () => {
            const r = await api.recover(endpoint.id, {
              since: isoOf(since),
              ...(until ? { until: isoOf(until) } : {}),
            });
            return recoveredNote(r);
          });
        }}
      >
        <h3>Recover failed deliveries</h3>
        <p class="hint">Failed deliveries created in this range get one more attempt each, now.</p>
        <div class="range">
          <label for={`since-${endpoint.id}`}>From</label>
          <input
            id={`since-${endpoint.id}`}
            type="datetime-local"
            required
            value={since}
            onInput={(e) => setSince((e.target as HTMLInputElement).value)}
          />
          <label for={`until-${endpoint.id}`}>To (now if empty)</label>
          <input
            id={`until-${endpoint.id}`}
            type="datetime-local"
            value={until}
            onInput={(e) => setUntil((e.target as HTMLInputElement).value)}
          />
        </div>
        <button type="submit" disabled={endpoint.status !== 'active'}>
          Recover
        </button>
      </form>
      {note && (
        <p role="status" class="note operations-note">
          {note}
        </p>
      )}
    </div>
  );
}
