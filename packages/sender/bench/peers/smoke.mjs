// Smoke run of the job-queue peers: the bench receiver (8 HTTPS ports), each peer for 2 rounds of
// 200 events × 8 endpoints (one each way of enqueueing), deliveries/s per round, then every peer
// closed and checked for leftovers (schemas, Redis keys). Exits 1 when a peer fails to deliver
// everything, leaves something behind, or the whole run takes over 3 minutes.
//
//   node bench/peers/smoke.mjs
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  cleanup,
  createTestCertificates,
  fmtInt,
  HarnessError,
  onCleanup,
  pad,
  startReceiver,
  withTimeout,
} from '../harness.mjs';
import { RESOURCE_PREFIX } from './common.mjs';
import { createPeer, PEERS } from './index.mjs';

const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ENDPOINTS = 8;
const EVENTS = 200;
// The two ways part 5 enqueues (bench/service.mjs, peerWays), at its sizes, a round each: slices of
// 1,000 jobs, and a click a call from 32 producers.
const WAYS = [
  { label: '1,000 jobs a call:', options: { batch: 1_000 } },
  { label: 'a click a call:', options: { producers: 32 } },
];
const ROUNDS = WAYS.length;
const BODY_BYTES = 1024;
const OVERALL_MS = 180_000;

// A click envelope padded to exactly BODY_BYTES, numbered so every body differs.
function clickBody(n) {
  const envelope = (filler) =>
    JSON.stringify({
      event: 'click',
      timestamp: '2026-11-22T09:00:00Z',
      data: {
        click_id: `smk_${String(n).padStart(8, '0')}`,
        link_id: 'lnk_summer_sale',
        destination_url: `https://shop.example.com/summer?utm_source=linkhooks&utm_content=${filler}`,
      },
    });
  const filler = 'x'.repeat(BODY_BYTES - Buffer.byteLength(envelope('')));
  return Buffer.from(envelope(filler));
}

/** Schemas and Redis keys named after this process that are still there. */
async function leftovers() {
  const found = [];
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)', [
      RESOURCE_PREFIX,
    ]);
    found.push(...rows.map((r) => `schema ${r.nspname}`));
  } finally {
    await client.end();
  }
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${RESOURCE_PREFIX}*`, 'COUNT', 1_000);
      found.push(...keys.map((k) => `redis key ${k}`));
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return found;
}

async function main() {
  console.log(
    `bench peers smoke — Node ${process.version}: ${ROUNDS} rounds of ${EVENTS} events × ${ENDPOINTS} endpoints per peer`,
  );
  const certs = createTestCertificates();
  const receiver = await startReceiver(certs, ENDPOINTS);
  const secret = 'whsec_bench_peer_secret_00000000000000000000000';
  const targets = receiver.origins.map((origin, i) => ({ url: `${origin}/hooks/${i}`, secret }));
  const events = Array.from({ length: EVENTS }, (_, i) => clickBody(i));
  const failures = [];

  const peers = [];
  for (const name of PEERS) {
    try {
      const peer = await withTimeout(
        createPeer(name, { targets, ca: certs.ca, concurrency: 64, pgUrl: PG_URL, redisUrl: REDIS_URL }),
        30_000,
        `starting ${name}`,
      );
      onCleanup(() => withTimeout(peer.close(), 30_000, `closing ${name}`));
      peers.push({ name, peer, rates: [], closed: false });
    } catch (error) {
      failures.push(`${name}: did not start: ${error.message}`);
    }
  }

  // Interleaved rounds, as the bench runs them; a peer that fails drops out of the later rounds.
  for (let round = 0; round < ROUNDS; round++) {
    for (const p of peers) {
      if (p.failed) continue;
      try {
        const before = (await receiver.stats()).requests;
        const { deliveries, ms } = await p.peer.runRound(events, WAYS[round].options);
        const received = (await receiver.stats()).requests - before;
        if (deliveries !== EVENTS * ENDPOINTS || received !== deliveries) {
          throw new HarnessError(`${deliveries} deliveries reported, ${received} received by the receiver`);
        }
        p.rates.push(`${WAYS[round].label} ${fmtInt(deliveries / (ms / 1000))}`);
      } catch (error) {
        p.failed = true;
        failures.push(`${p.name}: round ${round + 1}: ${error.message}`);
      }
    }
  }

  console.log(
    '   (the first round also opens the connections and warms the JIT; the bench runs a warm-up first)',
  );
  console.log(`   ${pad('peer', 18)}deliveries/s per round`);
  for (const p of peers) console.log(`   ${pad(p.name, 18)}${p.rates.join(', ') || '—'}`);

  for (const p of peers) {
    try {
      await withTimeout(p.peer.close(), 30_000, `closing ${p.name}`);
    } catch (error) {
      failures.push(`${p.name}: close: ${error.message}`);
    }
  }
  const left = await withTimeout(leftovers(), 15_000, 'the leftover check');
  if (left.length > 0) failures.push(`left behind: ${left.join(', ')}`);
  else console.log('   closed: no schema and no Redis key of this run is left');
  return failures;
}

const watchdog = setTimeout(() => {
  console.error(`smoke: not done within ${OVERALL_MS / 1000} s`);
  cleanup().finally(() => process.exit(1));
}, OVERALL_MS);
watchdog.unref();

main()
  .then(async (failures) => {
    await cleanup();
    for (const f of failures) console.error(`FAILED ${f}`);
    process.exit(failures.length ? 1 : 0);
  })
  .catch(async (error) => {
    await cleanup();
    console.error(error);
    process.exit(1);
  });
