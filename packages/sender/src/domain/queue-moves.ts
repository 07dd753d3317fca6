/**
 * Which way an endpoint's queued deliveries move once its flags change (design D34): the flags
 * are the truth, and the deliveries follow them a bounded step at a time. An endpoint that may not
 * be attempted (disabled, or paused) has its claimable deliveries held; one that may has its held
 * deliveries made claimable again. Skipped deliveries a re-enabling replays follow the same way,
 * unless the endpoint is disabled again: events for a disabled endpoint are skipped.
 *
 * The change of flags lists the endpoint and makes the first step in its own transaction; each
 * later step is a transaction of its own (engine/queue-settling.ts), and the step that finds
 * nothing left to move takes the endpoint off the list (each store's settle-queue.ts).
 */
import { CLAIMABLE_STATUSES, type DeliveryStatus } from './delivery-state.js';

export type QueueMove = 'hold' | 'release' | 'hold-skipped' | 'replay';

/** The statuses each move takes deliveries from. */
export const MOVED_FROM: Record<QueueMove, readonly DeliveryStatus[]> = {
  hold: CLAIMABLE_STATUSES,
  release: ['held'],
  'hold-skipped': ['skipped'],
  replay: ['skipped'],
};

export function queueMoves(endpoint: { enabled: boolean; paused: boolean }, replay: boolean): QueueMove[] {
  if (!endpoint.enabled) return ['hold'];
  if (endpoint.paused) return replay ? ['hold', 'hold-skipped'] : ['hold'];
  return replay ? ['release', 'replay'] : ['release'];
}

/**
 * What one step moved: `held` (claimable made held), `released` (held made claimable), `replayed`
 * (skipped made claimable, or held when the endpoint is paused).
 */
export interface QueueMoved {
  held: number;
  released: number;
  replayed: number;
}

export const NOTHING_MOVED: QueueMoved = { held: 0, released: 0, replayed: 0 };

/** Adds what `step` moved to `total`. */
export function addMoved(total: QueueMoved, step: QueueMoved): void {
  total.held += step.held;
  total.released += step.released;
  total.replayed += step.replayed;
}

/** Where a move's rows are counted. */
export const MOVED_AS: Record<QueueMove, keyof QueueMoved> = {
  hold: 'held',
  'hold-skipped': 'replayed',
  release: 'released',
  replay: 'replayed',
};
