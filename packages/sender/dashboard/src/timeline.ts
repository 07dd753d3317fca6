/**
 * The rows of a delivery's timeline, from what happened and what is planned: each attempt made
 * (when it was due and when it was made), then — only while the delivery still waits — the next
 * attempt at its real due time. Times come from the log, so a service running its schedule at
 * another speed shows its own times; attempts that will never be made are not listed.
 */
import type { Attempt, Delivery } from './api.js';

/** Attempts in all: the first and five retries (design R12). */
const ATTEMPTS_IN_ALL = 6;

export interface TimelineRow {
  number: number;
  kind: 'ok' | 'failed' | 'next' | 'held';
  /** Milliseconds after the delivery was created. */
  dueAfterMs: number | null;
  madeAfterMs: number | null;
  outcome: string | null;
}

export interface Timeline {
  rows: TimelineRow[];
  /** Attempts still possible after the next one, if it fails too. */
  laterAttempts: number;
}

export function timelineOf(delivery: Delivery, attempts: Attempt[]): Timeline {
  const created = Date.parse(delivery.created_at);
  const after = (iso: string | null) => (iso === null ? null : Date.parse(iso) - created);
  const made = [...attempts].sort((a, b) => a.number - b.number);
  const rows: TimelineRow[] = made.map((a, i) => ({
    number: a.number,
    kind: a.failure_kind ? 'failed' : 'ok',
    dueAfterMs: i === 0 ? 0 : after(made[i - 1]!.next_attempt_at),
    madeAfterMs: after(a.started_at),
    outcome: a.status_code !== null ? String(a.status_code) : a.failure_kind,
  }));
  const number = (made.at(-1)?.number ?? 0) + 1;
  if (delivery.status === 'held') {
    rows.push({ number, kind: 'held', dueAfterMs: null, madeAfterMs: null, outcome: null });
  } else if (
    (delivery.status === 'pending' || delivery.status === 'awaiting_retry') &&
    delivery.next_attempt_at !== null
  ) {
    rows.push({
      number,
      kind: 'next',
      dueAfterMs: after(delivery.next_attempt_at),
      madeAfterMs: null,
      outcome: null,
    });
  }
  const waiting = rows.at(-1)?.kind === 'next' || rows.at(-1)?.kind === 'held';
  return { rows, laterAttempts: waiting ? Math.max(0, ATTEMPTS_IN_ALL - number) : 0 };
}
