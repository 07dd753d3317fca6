/**
 * The delivery an event makes for one subscribed endpoint at publish (design R8, D2, D34): `pending`
 * and due at once for an enabled endpoint, `held` (due at once when resumed) for a paused one, and
 * `skipped` for a disabled one, paused or not. One definition for every store.
 */
import type { DeliveryRecord, EventRecord } from './records.js';

export function newDelivery(
  event: EventRecord,
  endpoint: { id: string; enabled: boolean; paused?: boolean },
  id: string,
  test = false,
): DeliveryRecord {
  return {
    id,
    eventId: event.id,
    endpointId: endpoint.id,
    accountId: event.accountId,
    eventName: event.name,
    status: !endpoint.enabled ? 'skipped' : endpoint.paused ? 'held' : 'pending',
    attempts: 0,
    nextAttemptAt: endpoint.enabled ? event.createdAt : null,
    lastFailureKind: null,
    lastStatusCode: null,
    test,
    createdAt: event.createdAt,
    updatedAt: event.createdAt,
  };
}
