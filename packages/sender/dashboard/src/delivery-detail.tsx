import { useEffect, useState } from 'preact/hooks';
import { api, type DeliveryDetail as Detail } from './api.js';
import { type TimelineRow, timelineOf } from './timeline.js';

const ms = (n: number) =>
  n < 60_000
    ? `${Math.round(n / 1000)} s`
    : n < 3_600_000
      ? `${Math.round(n / 60_000)} min`
      : `${(n / 3_600_000).toFixed(1)} h`;

/** One delivery: every attempt with its request and answer, a timeline against the schedule, retry now. */
export function DeliveryDetailView({ id, onBack }: { id: string; onBack: () => void }) {
  const [detail, setDetail] = useState<Detail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const load = () => api.delivery(id).then(setDetail, (err: Error) => setError(err.message));
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), 2000);
    return () => clearInterval(timer);
  }, [id]);
  if (error)
    return (
      <p role="alert" class="error">
        {error}
      </p>
    );
  if (!detail) return <p>Loading…</p>;
  const { delivery, attempts } = detail;
  const timeline = timelineOf(delivery, attempts);
  return (
    <section aria-labelledby="detail-title">
      <button type="button" onClick={onBack}>
        ← Back to the log
      </button>
      <h2 id="detail-title">
        Delivery <code>{delivery.id}</code>
      </h2>
      <p>
        <span class={`badge ${delivery.status}`}>{delivery.status}</span>
        {delivery.test && <span class="badge test">test</span>} · {delivery.event} · endpoint{' '}
        <code>{delivery.endpoint_id}</code> · {delivery.attempts} attempt{delivery.attempts === 1 ? '' : 's'}
        {delivery.status === 'held'
          ? ' · held until the endpoint is re-enabled'
          : delivery.next_attempt_at &&
            ` · next at ${new Date(delivery.next_attempt_at).toLocaleTimeString()}`}
      </p>
      <button
        type="button"
        onClick={() =>
          api.retry(id).then(
            () => {
              setNote('Retry scheduled now.');
              void load();
            },
            (err: Error) => setNote(err.message),
          )
        }
      >
        Retry now
      </button>
      {note && (
        <p role="status" class="note">
          {note}
        </p>
      )}
      <h3>Timeline</h3>
      <ol class="timeline" aria-label="Attempts made, and the next one while it waits">
        {timeline.rows.map((row) => (
          <li
            key={row.number}
            class={row.kind === 'ok' ? 'ok' : row.kind === 'failed' ? 'failed' : 'pending'}
          >
            <span>Attempt {row.number}</span> <span class="due">{dueText(row)}</span>{' '}
            <span class="actual">{madeText(row)}</span>
          </li>
        ))}
      </ol>
      {timeline.laterAttempts > 0 && (
        <p class="hint">
          If it fails, up to {timeline.laterAttempts} more attempt{timeline.laterAttempts === 1 ? '' : 's'} on
          the retry schedule.
        </p>
      )}
      <h3>Request body</h3>
      <pre class="body">{detail.request_body}</pre>
      <h3>Attempts</h3>
      {attempts.map((a) => (
        <details key={a.number} class="attempt" data-attempt={a.number} open={a.number === attempts.length}>
          <summary>
            Attempt {a.number} · {new Date(a.started_at).toLocaleTimeString()} · {a.status_code ?? '—'} ·{' '}
            {a.duration_ms} ms{a.failure_kind ? ` · ${a.failure_kind}` : ''}
          </summary>
          <dl>
            {a.error_message && (
              <>
                <dt>Error</dt>
                <dd>{a.error_message}</dd>
              </>
            )}
            <dt>Request headers</dt>
            <dd>
              <pre>
                {Object.entries(a.request_headers)
                  .map(([k, v]) => `${k}: ${v}`)
                  .join('\n')}
              </pre>
            </dd>
            <dt>Response (first 4 KiB)</dt>
            <dd>
              <pre class="snippet">{a.response_snippet ?? '—'}</pre>
            </dd>
          </dl>
        </details>
      ))}
    </section>
  );
}

const after = (n: number | null) => (n === null ? '' : `+${ms(Math.max(0, n))}`);

function dueText(row: TimelineRow): string {
  if (row.kind === 'held') return 'held: sent when the endpoint is re-enabled';
  return row.dueAfterMs === null ? '' : `due ${after(row.dueAfterMs)}`;
}

function madeText(row: TimelineRow): string {
  if (row.kind === 'next') return '— next';
  if (row.kind === 'held') return '';
  return `made ${after(row.madeAfterMs)}: ${row.outcome}`;
}
