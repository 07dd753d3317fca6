/**
 * The rows of a delivery's timeline, from what happened and what is planned (design D49): each
 * attempt made, when it was due and when it was made, then — only while an attempt will really
 * be made — the next one. Times are the log's own, so a schedule run at any speed shows its real
 * times. Pure: `now` is given, so "due now" and "waiting" are decided the same in tests as on screen.
 */
import type { Attempt, Delivery } from './api.js';

/** Attempts in all: the first and five retries (design R12). */
const ATTEMPTS_IN_ALL = 6;

/** The endpoint as the timeline needs it; null when it is not known (yet). */
export interface EndpointState {
  enabled: boolean;
  paused: boolean;
}

export interface TimelineRow {
  number: number;
  /** `waiting`: the next attempt waits on the endpoint (paused or disabled), at no time yet. */
  kind: 'ok' | 'failed' | 'next' | 'waiting';
  /** When the attempt was or is due (epoch ms); null while it waits on the endpoint. */
  dueAt: number | null;
  /** When it was made; null for one not made yet. */
  madeAt: number | null;
  /** A planned attempt whose time has passed: the service makes it at the next moment it can. */
  dueNow: boolean;
  outcome: string | null;
}

export interface Timeline {
  createdAt: number;
  rows: TimelineRow[];
  /** Attempts still possible after the next one, if it fails too. */
  laterAttempts: number;
  /** What the delivery is waiting for, or why nothing more happens, in plain words. */
  note: string | null;
}

export function timelineOf(
  delivery: Delivery,
  attempts: Attempt[],
  endpoint: EndpointState | null,
  now: number,
): Timeline {
  const createdAt = Date.parse(delivery.created_at);
  const time = (iso: string | null) => (iso === null ? null : Date.parse(iso));
  const made = [...attempts].sort((a, b) => a.number - b.number);
  const rows: TimelineRow[] = made.map((a, i) => ({
    number: a.number,
    kind: a.failure_kind ? 'failed' : 'ok',
    // The page holds a delivery's latest attempts: the first one shown need not be its first.
    dueAt: a.number === 1 ? createdAt : i === 0 ? null : time(made[i - 1]!.next_attempt_at),
    madeAt: time(a.started_at),
    dueNow: false,
    outcome: a.status_code !== null ? String(a.status_code) : a.failure_kind,
  }));
  const number = (made.at(-1)?.number ?? 0) + 1;
  const queued = delivery.status === 'pending' || delivery.status === 'awaiting_retry';
  const waitsOnEndpoint =
    delivery.status === 'held' || (queued && endpoint !== null && (!endpoint.enabled || endpoint.paused));
  let note = finalNote(delivery, made.at(-1)?.number ?? 0);
  if (waitsOnEndpoint) {
    rows.push({ number, kind: 'waiting', dueAt: null, madeAt: null, dueNow: false, outcome: null });
    note = waitingNote(endpoint);
  } else if (queued && delivery.next_attempt_at !== null) {
    const dueAt = Date.parse(delivery.next_attempt_at);
    rows.push({ number, kind: 'next', dueAt, madeAt: null, dueNow: dueAt <= now, outcome: null });
  }
  const last = rows.at(-1)?.kind;
  const open = last === 'next' || last === 'waiting';
  return { createdAt, rows, laterAttempts: open ? Math.max(0, ATTEMPTS_IN_ALL - number) : 0, note };
}

function waitingNote(endpoint: EndpointState | null): string {
  if (endpoint?.paused && endpoint.enabled)
    return 'Waiting: the endpoint is paused. This delivery is sent when you resume the endpoint; until then no attempt is made or counted.';
  if (endpoint && !endpoint.enabled)
    return 'Waiting: the endpoint is disabled. This delivery is sent when you re-enable the endpoint.';
  return 'Waiting for the endpoint to be resumed or re-enabled; no attempt is made until then.';
}

function finalNote(delivery: Delivery, attemptsMade: number): string | null {
  if (delivery.status === 'skipped')
    return 'Skipped: the endpoint was disabled when this event happened, so it was never sent. Re-enable the endpoint with “Replay skipped events” to send it.';
  if (delivery.status === 'failed') {
    const byHand = attemptsMade - ATTEMPTS_IN_ALL;
    if (byHand > 0)
      return `Failed: its ${ATTEMPTS_IN_ALL} scheduled attempts and ${byHand === 1 ? 'a retry' : `${byHand} retries`} by hand failed, and no more are made. “Retry now” tries once more.`;
    return attemptsMade === ATTEMPTS_IN_ALL
      ? `Failed: all ${ATTEMPTS_IN_ALL} attempts failed, and no more are made. “Retry now” tries once more.`
      : 'Failed: no more attempts are made. “Retry now” tries once more.';
  }
  return null;
}

/** A span of time in the unit that fits it: milliseconds to days, so any schedule reads well. */
export function formatSpan(ms: number): string {
  const n = Math.max(0, ms);
  if (n < 1000) return `${Math.round(n)} ms`;
  if (n < 60_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)} s`;
  if (n < 3_600_000) return `${(n / 60_000).toFixed(n < 600_000 ? 1 : 0)} min`;
  if (n < 86_400_000) return `${(n / 3_600_000).toFixed(1)} h`;
  return `${(n / 86_400_000).toFixed(1)} d`;
}

/** A moment, with the date only when it is not the day of `now`, and seconds kept. */
export function formatMoment(at: number, now: number): string {
  const date = new Date(at);
  const time = date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  return new Date(now).toDateString() === date.toDateString()
    ? time
    : `${date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${time}`;
}
