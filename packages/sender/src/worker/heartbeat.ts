/**
 * The worker's heartbeat (design I3): every attempt's lease is renewed while it runs, so a lease
 * can be short and a dead worker's deliveries are taken over within one lease. A request whose
 * lease is gone (taken over after this process stalled) or will lapse before the next renewal
 * (the store is unreachable) is abandoned, so no two workers ever have a request of one delivery
 * open.
 */
import type { Clock } from '../clock.js';
import type { Abandon } from '../delivery/abandon.js';
import { leaseKey } from '../store/lease.js';
import type { DeliveryQueue } from '../store/port.js';
import type { ClaimedDelivery } from '../store/records.js';

export interface HeldLease {
  claim: ClaimedDelivery;
  /** The request is over; the attempt is being recorded. */
  sent: boolean;
  /** Until when the lease is known to hold. */
  heldUntil: number;
  /** Aborted when the lease is lost: the request is cut short and nothing recorded. */
  abandon: Abandon;
}

export interface HeartbeatOptions {
  queue: DeliveryQueue;
  clock: Clock;
  leaseMs: number;
  renewEveryMs: number;
  onError(error: unknown): void;
}

export function createHeartbeat(options: HeartbeatOptions, held: () => HeldLease[]) {
  let renewing = false;
  let timer: NodeJS.Timeout | undefined;
  // Requests whose lease lapses before the next tick could renew it: abandoned, since another
  // worker may take the delivery over once it lapses (design I3).
  const abandonLapsing = (leases: HeldLease[]) => {
    const lapsing = options.clock.now() + options.renewEveryMs;
    for (const r of leases) if (!r.sent && r.heldUntil <= lapsing) r.abandon.abort();
  };
  const renew = async () => {
    const leases = held();
    if (leases.length === 0) return;
    // A renewal still waiting (a busy pool, a lock) renews nothing in time: the leases it would
    // have renewed are judged as if it had failed, rather than left to lapse under open requests.
    if (renewing) return abandonLapsing(leases);
    renewing = true;
    const expiresAt = options.clock.now() + options.leaseMs;
    try {
      const renewed = await options.queue.renewLeases(
        leases.map((r) => ({ deliveryId: r.claim.delivery.id, leaseToken: r.claim.leaseToken })),
        expiresAt,
      );
      const still = new Set(renewed.map((l) => leaseKey(l.deliveryId, l.leaseToken)));
      const current = new Set(held());
      for (const r of leases) {
        if (still.has(leaseKey(r.claim.delivery.id, r.claim.leaseToken))) r.heldUntil = expiresAt;
        // Not renewed and the request still open: the lease was taken over. (An attempt whose
        // request is over has ended its lease itself by recording it.)
        else if (!r.sent && current.has(r)) r.abandon.abort();
      }
    } catch (error) {
      options.onError(error);
      abandonLapsing(leases);
    } finally {
      renewing = false;
    }
  };
  return {
    start() {
      clearInterval(timer);
      timer = setInterval(() => void renew(), options.renewEveryMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
