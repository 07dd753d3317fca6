/**
 * The worker's slots (design D25): `concurrency` requests at once, and as many more being recorded.
 * A request out for HELD_SLOT_MS or longer is waiting on its receiver, not on this process: it holds
 * a socket and a lease, and no slot, so the receivers that hang cannot take every slot between them
 * however many accounts they belong to (each account's share and each endpoint's cap still count
 * them). Up to WAITING_PER_SLOT times `concurrency` of them; past that they hold slots again. Only
 * requests of bodies up to LARGE_BODY_BYTES wait so (the worker's choice): what waiting requests
 * hold in memory stays within 512 bodies of 64 KiB with the default slots.
 */
import { HELD_SLOT_MS } from '../domain/breaker.js';

/** How many waiting requests, per slot, hold none: 512 with the default 64 slots. */
export const WAITING_PER_SLOT = 8;

export interface SlotUse {
  concurrency: number;
  /** Requests holding their slots until recorded or answered (WorkerOptions.freeSlotOnResponse), the waiting among them. */
  sending: number;
  /** Every attempt not yet recorded: those sending and those being recorded. */
  unrecorded: number;
  /** Of those sending, the ones out for HELD_SLOT_MS or longer and not answered yet. */
  waiting: number;
}

/** How many more deliveries the worker may claim now. */
export function freeSlots({ concurrency, sending, unrecorded, waiting }: SlotUse): number {
  const slotless = Math.min(waiting, WAITING_PER_SLOT * concurrency);
  return Math.min(concurrency - (sending - slotless), 2 * concurrency - (unrecorded - slotless));
}

/**
 * Of the requests out since `sentAt` (performance.now() times, oldest first), how many wait at
 * `now`: read until the first that has not waited long enough, as every one after it went out
 * later. What the worker does at each turn of its loop, where a request's end wakes it: reading
 * every request in flight there measured 1.17× the PostgreSQL service's CPU per delivery.
 */
export function waitingAt(sentAt: Iterable<number>, now: number): number {
  let waiting = 0;
  for (const at of sentAt) {
    if (now - at < HELD_SLOT_MS) break;
    waiting++;
  }
  return waiting;
}
