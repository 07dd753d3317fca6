/**
 * Deleting an endpoint (design D78): marked, then its deliveries a bounded step at a time with the
 * event loop free between steps, then the endpoint itself. A deletion cut short (the process
 * stopped, the request's client gone) is finished by the next DELETE of the endpoint, or by
 * `finishEndpointDeletions`, which every pruning of the log runs.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../clock.js';
import type { SenderStore } from '../store/port.js';
import { DELETE_STEP } from './account-admin.js';

/** The deletions cut short one pruning finishes at most: the rest wait for the next. */
const DELETIONS_FINISHED_AT_ONCE = 100;

export function endpointDeletion({ store, clock }: { store: SenderStore; clock: Clock }) {
  /** A marked endpoint's deliveries in steps, then the endpoint; answers the deliveries removed. */
  async function removeMarked(accountId: string, id: string): Promise<number> {
    let removed = 0;
    for (;;) {
      const step = await store.deleteEndpointStep(accountId, id, DELETE_STEP);
      if (step === 0) break;
      removed += step;
      await nextTurn(); // the event loop is free between steps
    }
    // False when another deletion of it ended first: gone either way.
    await store.deleteEndpoint(accountId, id);
    return removed;
  }

  return {
    /** False when the account has no such endpoint (a deletion under way still has it). */
    async deleteEndpoint(accountId: string, id: string): Promise<boolean> {
      if (!(await store.markEndpointDeleted(accountId, id, clock.now()))) return false;
      await removeMarked(accountId, id);
      return true;
    },

    /** Finishes deletions cut short; answers how many endpoints it finished. */
    async finishEndpointDeletions(): Promise<number> {
      const marked = await store.endpointsBeingDeleted(DELETIONS_FINISHED_AT_ONCE);
      for (const { accountId, id } of marked) await removeMarked(accountId, id);
      return marked.length;
    },
  };
}
