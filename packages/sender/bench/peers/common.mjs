// What every peer shares: the delivery its job handler makes, the bookkeeping that tells a round
// when the receiver has answered every delivery, and the naming and removal of what a peer
// creates. Only the queue around them differs.
import { createHmac, randomBytes } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import pg from 'pg';
import { Agent, request } from 'undici';
import { HarnessError, withTimeout } from '../harness.mjs';

export const DELIVERY_TIMEOUT_MS = 30_000;

/** Names of the schemas and Redis prefixes the peers create; smoke.mjs looks for leftovers by it. */
export const RESOURCE_PREFIX = `bench_peer_${process.pid}_`;
export const resourceName = (what) => `${RESOURCE_PREFIX}${what}_${randomBytes(3).toString('hex')}`;

export async function dropSchema(pgUrl, schema) {
  const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await withTimeout(
      client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`),
      15_000,
      `dropping schema ${schema}`,
    );
  } finally {
    await client.end();
  }
}

/** Runs every step of a close, each bounded, even when one fails; rethrows the first failure. */
export async function closeSteps(what, steps) {
  let first;
  for (const [label, step, ms = 10_000] of steps) {
    try {
      await withTimeout(Promise.resolve().then(step), ms, `${what}: ${label}`);
    } catch (error) {
      first ??= error;
    }
  }
  if (first) throw first;
}

/**
 * The handler's HTTP side: sign the body with the endpoint's secret and POST it. One Agent and one
 * TLS context for every connection, as the engine and the bare loop have: `connect: { ca }` alone
 * would parse the CA again for each connection.
 */
export function createDeliverer({ targets, ca }) {
  const agent = new Agent({ connect: { secureContext: createSecureContext({ ca }) } });
  return {
    /** `job`: the payload the peers enqueue. Throws on a non-2xx answer so the queue retries. */
    async deliver(job, attempt) {
      const target = targets[job.endpoint];
      const body = Buffer.from(job.body, 'base64');
      const response = await request(target.url, {
        dispatcher: agent,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-service-signature': createHmac('sha256', target.secret).update(body).digest('hex'),
          'x-service-event-id': job.event,
          'x-service-delivery-id': job.delivery,
          'x-service-attempt': String(attempt),
          'user-agent': 'linkhooks/bench-peer',
        },
        body,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      await response.body.text();
      if (response.statusCode < 200 || response.statusCode > 299) {
        throw new Error(`the receiver answered ${response.statusCode} to ${job.delivery}`);
      }
    },
    close: () => agent.close(),
  };
}

/**
 * One round at a time: `begin` numbers it, the handlers report each delivery answered 2xx, and
 * `done` resolves with the time of the last one. A delivery counts once however often the queue
 * runs it, and a job of an earlier round is not counted in this one.
 */
export function createRounds() {
  let current = null;
  let last = 0;
  return {
    begin(expected) {
      const round = { id: ++last, expected, seen: new Uint8Array(expected), count: 0 };
      round.done = new Promise((resolve, reject) => {
        round.resolve = resolve;
        round.reject = reject;
      });
      round.done.catch(() => undefined); // awaited by runRound; not unhandled meanwhile
      current = round;
      return round;
    },
    delivered(job) {
      const round = current;
      if (round?.id !== job.round || round.seen[job.index]) return;
      round.seen[job.index] = 1;
      if (++round.count === round.expected) round.resolve(performance.now());
    },
    // A failed attempt means the receiver or the harness is broken, as in run.mjs: the round
    // fails at once instead of waiting out the queue's retry delays.
    failed(job, error) {
      if (current?.id === job.round) {
        current.reject(new HarnessError(`a delivery failed (${job.delivery}): ${error?.message ?? error}`));
      }
    },
  };
}
