// What the store benches (store-cycle.mjs, claim-bodies.mjs) share: a build's store by its dist/,
// the endpoints a round publishes to, and a claim's deliveries recorded as a worker records a 200.
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_DISABLE_POLICY, RETRY_DELAYS_MS } from '@linkhooks/sender';
import { check, PACKAGE } from './harness.mjs';

/** The package as built in `dist` (a folder of this package, such as dist-old/ beside dist/). */
export const buildAt = (dist) => import(pathToFileURL(join(resolve(PACKAGE, dist), 'index.js')).href);

export const RULES = { schedule: { delaysMs: RETRY_DELAYS_MS }, policy: DEFAULT_DISABLE_POLICY };

/** An endpoint of `accountId` for each of `ids`, subscribed to clicks. */
export async function addEndpoints(store, accountId, ids) {
  for (const [i, id] of ids.entries()) {
    await store.createEndpoint({
      id,
      accountId,
      url: `https://127.0.0.1/hooks/${i}`,
      events: ['click'],
      secret: 'whsec_bench_not_a_secret',
      description: null,
      now: Date.now(),
    });
  }
}

/** Records `claimed` delivered at `now`, all at once, and checks every record applied. */
export async function recordDelivered(store, claimed, now) {
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
        rules: RULES,
        now,
      }),
    ),
  );
  check(
    records.every((r) => r.applied),
    'an attempt was not recorded',
  );
}
