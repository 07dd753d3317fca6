/**
 * The delivery an event makes for one subscribed endpoint at publish (design R8, D2): `pending` and due at once for an enabled endpoint, `skipped` for a disabled one.
 * One definition for every store.
 */
import type { DeliveryRecord, EventRecord } from './records.js';

export function newDelivery(
  event: EventRecord,
  endpoint: { id: string; enabled: boolean },
  id: string,
  test = false,
): DeliveryRecord {
  return {
    id,
    eventId: event.id,
    endpointId: endpoint.id,
    accountId: event.accountId,
    eventName: event.name,
    status: endpoint.enabled ? 'pending' : 'skipped',
    attempts: 0,
    nextAttemptAt: endpoint.enabled ? event.createdAt : null,
    lastFailureKind: null,
    lastStatusCode: null,
    test,
    createdAt: event.createdAt,
    updatedAt: event.createdAt,
  };
}
