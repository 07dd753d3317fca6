// Each claimed delivery's first attempt recorded as delivered, as a worker records a 200: what the
// store benches do after a claim, no request sent.
import { check } from './harness.mjs';

/** Records `claimed` delivered at `now` under `rules`, all at once, and checks every record applied. */
export async function recordDelivered(store, claimed, now, rules) {
  const records = await Promise.all(
    claimed.map((c) =>
      store.recordAttempt({
        lease: { deliveryId: c.delivery.id, leaseToken: c.leaseToken },
        attempt: {
          deliveryId: c.delivery.id,
          number: 1,
          startedAt: now,
          durationMs: 1,
          statusCode: 200,
          failureKind: null,
          errorMessage: null,
          responseSnippet: null,
          requestHeaders: { 'content-type': 'application/json' },
        },
        rules,
        now,
      }),
    ),
  );
  check(
    records.every((r) => r.applied),
    'an attempt was not recorded',
  );
}
