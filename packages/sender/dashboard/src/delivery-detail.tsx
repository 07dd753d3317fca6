import { useRef, useState } from 'preact/hooks';
import { api, type DeliveryDetail as Detail, type Endpoint, FINAL_STATUSES } from './api.js';
import { CopyButton } from './copy-button.js';
import { EndpointName } from './endpoint-name.js';
import { attemptFailureMessage } from './messages.js';
import { cameFrom, linkProps } from './navigation.js';
import { formatMoment, formatSpan, type Timeline, type TimelineRow, timelineOf } from './timeline.js';
import { usePolling } from './use-polling.js';

/** One delivery: every attempt with its request and answer, a timeline of real times, retry now. */
export function DeliveryDetailView({ id }: { id: string }) {
  const [detail, setDetail] = useState<Detail | null>(null);
  const [endpoint, setEndpoint] = useState<Endpoint | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  // A final delivery changes only when someone acts (Retry now loads it again): no polling then.
  // Each delivery gets a view of its own (the route keys it by id), so this starts over with it.
  const final = useRef(false);
  const reload = usePolling(
    () => api.delivery(id),
    (d) => {
      final.current = FINAL_STATUSES.has(d.delivery.status);
      setDetail(d);
      api.endpoint(d.delivery.endpoint_id).then(setEndpoint, () => setEndpoint(null));
    },
    (err) => setError(err.message),
    2000,
    [id],
    () => final.current,
  );
  if (error)
    return (
      <p role="alert" class="error">
        {error}
      </p>
    );
  if (!detail) return <p>Loading…</p>;
  const { delivery, attempts } = detail;
  const now = Date.now();
  const timeline = timelineOf(delivery, attempts, endpoint, now);
  return (
    <section aria-labelledby="detail-title">
      <BackToLog />
      <h2 id="detail-title">
        Delivery <code class="id">{delivery.id}</code> <CopyButton text={delivery.id} what="delivery id" />
      </h2>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <span class={`badge ${delivery.status}`}>{delivery.status}</span>
          {delivery.test && <span class="badge test">test</span>}
        </dd>
        <dt>Event</dt>
        <dd>
          {delivery.event} · <code class="id">{delivery.event_id}</code>{' '}
          <CopyButton text={delivery.event_id} what="event id" />
        </dd>
        <dt>Endpoint</dt>
        <dd>
          <EndpointName id={delivery.endpoint_id} endpoint={endpoint ?? undefined} />
        </dd>
        <dt>Created</dt>
        <dd>{formatMoment(timeline.createdAt, now)}</dd>
      </dl>
      <button
        type="button"
        onClick={() =>
          api.retry(id).then(
            () => {
              setNote('Retry scheduled now.');
              void reload();
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
      <TimelineView timeline={timeline} now={now} />
      <h3>Request body</h3>
      <pre class="body">{detail.request_body}</pre>
      <h3>Attempts</h3>
      {(attempts[0]?.number ?? 1) > 1 && (
        <p class="note">
          The latest {attempts.length} of its {attempts.at(-1)!.number} attempts.
        </p>
      )}
      {attempts.map((a) => (
        <details key={a.number} class="attempt" data-attempt={a.number} open={a === attempts.at(-1)}>
          <summary>
            Attempt {a.number} · {formatMoment(Date.parse(a.started_at), now)} · {a.status_code ?? '—'} ·{' '}
            {formatSpan(a.duration_ms)}
          </summary>
          <dl>
            {a.failure_kind && (
              <>
                <dt>What happened</dt>
                <dd class="failure">{attemptFailureMessage(a)}</dd>
                {a.error_message && (
                  <>
                    <dt>Technical detail</dt>
                    <dd>
                      <code>{a.error_message}</code>
                    </dd>
                  </>
                )}
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

/** Back to the log as it was (its filters) when the delivery was opened from it, else to the whole log. */
function BackToLog() {
  const from = cameFrom();
  if (from?.startsWith('/dashboard/log'))
    return (
      <a
        class="back"
        href={from}
        onClick={(e) => {
          if (e.button !== 0 || e.metaKey || e.ctrlKey) return;
          e.preventDefault();
          history.back();
        }}
      >
        ← Back to the log
      </a>
    );
  return (
    <a class="back" {...linkProps({ name: 'log', filters: {} })}>
      ← Back to the log
    </a>
  );
}

function TimelineView({ timeline, now }: { timeline: Timeline; now: number }) {
  return (
    <>
      <h3>Timeline</h3>
      <ol class="timeline" aria-label="Attempts made, and the next one while one will be made">
        {timeline.rows.map((row) => (
          <li key={row.number} class={row.kind} data-kind={row.kind}>
            <span class="attempt-number">Attempt {row.number}</span>{' '}
            <span class="due">{dueText(row, timeline.createdAt, now)}</span>{' '}
            <span class="actual">{madeText(row, timeline.createdAt, now)}</span>
          </li>
        ))}
      </ol>
      {timeline.laterAttempts > 0 && (
        <p class="hint">
          If it fails, up to {timeline.laterAttempts} more attempt{timeline.laterAttempts === 1 ? '' : 's'} on
          the retry schedule.
        </p>
      )}
      {timeline.note && <p class="timeline-note">{timeline.note}</p>}
    </>
  );
}

const offset = (at: number, createdAt: number) => `+${formatSpan(at - createdAt)}`;

function dueText(row: TimelineRow, createdAt: number, now: number): string {
  if (row.kind === 'waiting') return 'waiting on the endpoint';
  if (row.dueAt === null) return '';
  if (row.dueNow) return 'due now';
  return `due ${formatMoment(row.dueAt, now)} (${offset(row.dueAt, createdAt)})`;
}

function madeText(row: TimelineRow, createdAt: number, now: number): string {
  if (row.kind === 'next') return row.dueNow ? '— next, at the next moment the service can' : '— next';
  if (row.kind === 'waiting' || row.madeAt === null) return '';
  return `· made ${formatMoment(row.madeAt, now)} (${offset(row.madeAt, createdAt)}): ${row.outcome}`;
}
