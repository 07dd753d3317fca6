/** `publishMany`: many events, each answering in its place, checked a slice at a time. */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isSenderError, type SenderError } from '../errors.js';
import type { DeliveryRecord } from '../store/records.js';
import type { PublishInput } from './event-input.js';

/** Events of a publishMany checked between two turns of the event loop. */
export const PUBLISH_SLICE = 50;

export interface PublishResult {
  eventId: string;
  deliveries: DeliveryRecord[];
  /** Set when the input's `eventId` was published before: nothing was stored (design D36). */
  duplicate?: boolean;
}

/** One event of a `publishMany` call: the account it is for, and the event. */
export interface PublishItem extends PublishInput {
  accountId: string;
}

/** Each item's own outcome, in the order given: one invalid event never rejects the others. */
export type PublishManyResult = Array<
  { ok: true; result: PublishResult } | { ok: false; error: SenderError }
>;

/**
 * Publishes every item with `publish`, which answers anything it refuses, a malformed item
 * included, as a rejection and never throws; the stores write those that arrive together in one
 * transaction. Checked and queued a slice at a time, with the event loop free between slices: a
 * thousand events checked in one go would hold every other request.
 */
export async function publishEach(
  items: readonly PublishItem[],
  publish: (accountId: string, input: PublishInput) => Promise<PublishResult>,
): Promise<PublishManyResult> {
  const pending: Promise<PublishManyResult[number]>[] = [];
  for (let i = 0; i < items.length; i += PUBLISH_SLICE) {
    if (i > 0) await nextTurn();
    for (const item of items.slice(i, i + PUBLISH_SLICE)) {
      // A malformed item (not even an object) answers in its place too. The outcome's handlers are
      // made outside this loop: made in it, they would share the block's scope, and hold the item
      // until its commit (design D61).
      const outcome = publish((item as Partial<PublishItem> | null)?.accountId as string, item).then(
        stored,
        refused,
      );
      outcome.catch(ignore); // awaited below; not unhandled while later slices run
      pending.push(outcome);
    }
  }
  // A broken store rejects the call once every item has settled: none is still being written when
  // the caller hears of it.
  return Promise.all(pending).catch(async (error) => {
    await Promise.allSettled(pending);
    throw error;
  });
}

const ignore = () => undefined;
const stored = (result: PublishResult) => ({ ok: true as const, result });
const refused = (error: unknown) => {
  if (isSenderError(error)) return { ok: false as const, error };
  throw error; // a broken store is not an item's fault
};
