/**
 * Generated traffic: what the link service would publish — mostly clicks, some conversions, now and
 * then a link change or an alert — at a steady rate, through `sender.publish` (the same path the
 * ingest route takes).
 */
import { type EventName, sampleEventData } from '@linkhooks/protocol';
import type { Sender } from '@linkhooks/sender';

/** Weighted mix of the six events (design R7). */
const MIX: readonly [EventName, number][] = [
  ['click', 70],
  ['conversion', 15],
  ['link.created', 4],
  ['link.updated', 5],
  ['link.deleted', 2],
  ['alert.triggered', 4],
];
const TOTAL = MIX.reduce((sum, [, weight]) => sum + weight, 0);

export function pickEvent(random = Math.random()): EventName {
  let at = random * TOTAL;
  for (const [name, weight] of MIX) {
    at -= weight;
    if (at < 0) return name;
  }
  return 'click';
}

export interface Traffic {
  published: number;
  stop(): void;
}

/** Publishes `perSecond` events for the account until stopped. */
export function generateTraffic(sender: Sender, accountId: string, perSecond: number): Traffic {
  const traffic: Traffic = { published: 0, stop: () => clearInterval(timer) };
  const timer = setInterval(() => {
    const name = pickEvent();
    sender
      .publish(accountId, { event: name, data: sampleEventData(name) })
      .then(() => {
        traffic.published++;
      })
      .catch((error: unknown) => console.error('traffic: publish failed', error));
  }, 1000 / perSecond);
  timer.unref();
  return traffic;
}
