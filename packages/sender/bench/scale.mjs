// The scale part of bench/run.mjs: a /metrics scrape as the service makes it, and the store's count of
// the queue behind it (a queue of half the log's size, in another account), a first and a deep page
// of the delivery log, an endpoint's page of its failed deliveries (its
// oldest ten, behind all its delivered ones), a page filtered by an event the log does not hold,
// a prune of a tenth of the log, the deletion of an endpoint, and a pause and resume of the queue's,
// each with a log of 1,000,000 deliveries beside the same with 10,000, on SQLite and PostgreSQL;
// with the event-loop delay p99 of this process during the counts, the prune, the deletion and the
// pause and resume.

import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sampleEventData } from '@linkhooks/protocol';
import pg from 'pg';
import { check, fmtInt, loopDelayMs, median, monotonicMs, runChild, sleep, tempDir } from './harness.mjs';

export const SCALE = { small: 10_000, large: 1_000_000, samples: 15 };
const ACCOUNT = 'acct_scale';
/** A tenant publishing while another's endpoint is deleted. */
const OTHER = 'acct_scale_other';
/** The account whose queue /metrics counts: QUEUE_SHARE of the log's size, awaiting a retry due tomorrow. */
export const QUEUE_ACCOUNT = 'acct_scale_queue';
export const QUEUE_SHARE = 0.5;
/** The fill's failed deliveries (fill-log.mjs has the same): the oldest ten of ep_000001. */
export const FAILED_SQL = `CASE WHEN i < 80 AND i % 8 = 1 THEN 'failed' ELSE 'delivered' END`;
const LOOP_SAMPLE_MS = 1; // the prune's event-loop delay, sampled every millisecond

async function fillPostgres(connectionString, schema, n, now) {
  const client = new pg.Client({ connectionString, options: `-c search_path="${schema}"` });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO endpoints (id, account_id, url, events, secret, created_at, updated_at)
       SELECT 'ep_' || lpad(i::text, 6, '0'), $1, 'https://127.0.0.1/hooks/' || i, '["click"]',
              'whsec_bench_not_a_secret', $2::bigint, $2::bigint FROM generate_series(0, 7) AS i`,
      [ACCOUNT, now],
    );
    const at = `CASE WHEN i < $3 / 10 THEN $2::bigint - 86400000 ELSE $2::bigint - 1800000 END`;
    await client.query(
      `INSERT INTO events (id, account_id, name, body, created_at)
       SELECT 'evt_' || lpad(i::text, 9, '0'), $1, 'click', '\\x00'::bytea, ${at}
       FROM generate_series(0, $3 - 1) AS i`,
      [ACCOUNT, now, n],
    );
    await client.query(
      `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                               next_attempt_at, last_status_code, created_at, updated_at)
       SELECT 'dlv_' || lpad(i::text, 9, '0'), 'evt_' || lpad(i::text, 9, '0'), 'ep_' || lpad((i % 8)::text, 6, '0'),
              $1, 'click', ${FAILED_SQL}, 1, NULL, 200, ${at}, ${at}
       FROM generate_series(0, $3 - 1) AS i`,
      [ACCOUNT, now, n],
    );
    await client.query(
      `INSERT INTO endpoints (id, account_id, url, events, secret, created_at, updated_at)
       VALUES ('ep_queue', $1, 'https://127.0.0.1/hooks/queue', '["click"]', 'whsec_bench_not_a_secret', $2::bigint, $2::bigint)`,
      [QUEUE_ACCOUNT, now],
    );
    await client.query(
      `INSERT INTO events (id, account_id, name, body, created_at)
       SELECT 'evq_' || lpad(i::text, 9, '0'), $1, 'click', '\\x00'::bytea, $2::bigint - 1800000
       FROM generate_series(0, $3 - 1) AS i`,
      [QUEUE_ACCOUNT, now, n * QUEUE_SHARE],
    );
    await client.query(
      `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, event_name, status, attempts,
                               next_attempt_at, last_status_code, created_at, updated_at)
       SELECT 'dlq_' || lpad(i::text, 9, '0'), 'evq_' || lpad(i::text, 9, '0'), 'ep_queue', $1, 'click',
              'awaiting_retry', 1, $2::bigint + 86400000, 503, $2::bigint - 1800000, $2::bigint - 1800000
       FROM generate_series(0, $3 - 1) AS i`,
      [QUEUE_ACCOUNT, now, n * QUEUE_SHARE],
    );
    await client.query('VACUUM ANALYZE endpoints, events, deliveries');
  } finally {
    await client.end();
  }
}

/**
 * The reads on two stores, one holding SCALE.small deliveries and one SCALE.large, timed call by
 * call in turn (small, large, small, …): a minute when the machine is slow weighs on both sides of
 * the ratio, not on whichever store was measured then. Medians of SCALE.samples calls each; and the
 * worst of the loop's delay p99 over each count of the queue (on SQLite, a read on the loop holds it).
 * `scrape`: the engine's /metrics text, as the service serves it, within 5 s of its count (the
 * first scrape, untimed, waits for it): what a scrape costs but for the count, shown beside it.
 */
async function timeReads(stores, createSender) {
  const senders = stores.map(({ store }) => createSender({ store }));
  for (const sender of senders) await sender.metrics.metrics();
  const reads = {
    scrape: async (_store, _n, k) => {
      const text = await senders[k].metrics.metrics();
      check(text.includes('linkhooks_queue_depth{status="awaiting_retry"}'), 'the scrape has no queue depth');
    },
    count: async (store, n) => {
      const { queued } = await store.stats();
      check(queued.awaiting_retry === n * QUEUE_SHARE, `the count found ${queued.awaiting_retry} queued`);
    },
    first: async (store) => {
      const page = await store.listDeliveries(ACCOUNT, { limit: 50 });
      check(page.items.length === 50, 'the first log page is not full');
    },
    deep: async (store, n) => {
      const cursor = `dlv_${String(Math.floor(n / 2)).padStart(9, '0')}`;
      const page = await store.listDeliveries(ACCOUNT, { limit: 50, cursor });
      check(page.items.length === 50, 'the deep log page is not full');
    },
    failed: async (store) => {
      const page = await store.listDeliveries(ACCOUNT, {
        limit: 50,
        endpointId: 'ep_000001',
        status: 'failed',
      });
      check(page.items.length === 10, `the failed page holds ${page.items.length} deliveries, not 10`);
    },
    // No conversion in the log: the page reads its window of each status and comes back empty.
    event: async (store) => {
      const page = await store.listDeliveries(ACCOUNT, { limit: 50, event: 'conversion' });
      check(page.items.length === 0 && page.nextCursor !== null, 'the event page is not empty with a cursor');
    },
  };
  const timed = stores.map(() => ({}));
  for (const [name, read] of Object.entries(reads)) {
    const ms = stores.map(() => []);
    const loopP99s = stores.map(() => []);
    // The loop's delay is kept over the counts only: a monitor of its own for each (one enabled
    // again measures the time it was off), which measures from its first tick and ticks on a timer
    // that a read holding the loop keeps from firing until after it, so a tick before and one after.
    const watched = name === 'count';
    for (let i = 0; i < SCALE.samples; i++) {
      for (const [k, { store, n }] of stores.entries()) {
        const loop = watched ? monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS }) : null;
        if (loop) {
          loop.enable();
          await sleep(3 * LOOP_SAMPLE_MS);
        }
        const t = monotonicMs();
        await read(store, n, k);
        ms[k].push(monotonicMs() - t);
        if (loop) {
          await sleep(3 * LOOP_SAMPLE_MS);
          loop.disable();
          loopP99s[k].push(loopDelayMs(loop.percentile(99) / 1e6, LOOP_SAMPLE_MS));
        }
      }
    }
    for (const [k, samples] of ms.entries()) {
      timed[k][name] = median(samples);
      if (watched) timed[k].countLoopP99 = Math.max(...loopP99s[k]);
    }
  }
  for (const sender of senders) await sender.stop(0);
  return timed;
}

/** A prune of the oldest tenth of a store holding `n` deliveries, with the loop's delay meanwhile. */
async function timePrune(store, n, now) {
  const loop = monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS });
  loop.enable();
  const t = monotonicMs();
  const pruned = await store.pruneBefore(now - 3_600_000);
  const prune = monotonicMs() - t;
  loop.disable();
  check(pruned === n / 10, `the prune deleted ${pruned} deliveries, not ${n / 10}`);
  return {
    prune,
    prunePerK: prune / (pruned / 1000),
    loopP99: loopDelayMs(loop.percentile(99) / 1e6, LOOP_SAMPLE_MS),
  };
}

/**
 * Deleting endpoints of a store holding `n` deliveries after its prune (0.9 n / 8 each left): one
 * as the service does (the engine's deleteEndpoint, in steps), and beside it, the baseline,
 * another by the store's last step alone (one statement on SQLite, one transaction on PostgreSQL,
 * as every deletion went before design D78). Each with the loop's delay meanwhile and the slowest
 * publish of another tenant's, which publishes one event after another throughout, as does the
 * endpoints' own account (to its other endpoints: on PostgreSQL each such publish share-locks the
 * endpoint being deleted, and the other tenant's publishes go out in the same statements).
 */
async function timeEndpointDeletion(createSender, store, n) {
  const sender = createSender({ store });
  await store.createEndpoint({
    id: 'ep_other_tenant',
    accountId: OTHER,
    url: 'https://127.0.0.1/hooks/other',
    events: ['click'],
    secret: 'whsec_bench_not_a_secret',
    description: null,
    now: Date.now(),
  });
  const rows = (0.9 * n) / 8;
  const measure = async (endpointId, remove) => {
    let going = true;
    let slowest = 0;
    const publishing = [OTHER, ACCOUNT].map(async (accountId) => {
      while (going) {
        const t = monotonicMs();
        await sender.publish(accountId, { event: 'click', data: sampleEventData('click') });
        if (accountId === OTHER) slowest = Math.max(slowest, monotonicMs() - t);
      }
    });
    const loop = monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS });
    loop.enable();
    const t = monotonicMs();
    await remove(endpointId);
    const ms = monotonicMs() - t;
    loop.disable();
    going = false;
    await Promise.all(publishing);
    const page = await store.listDeliveries(ACCOUNT, { limit: 1_000 });
    check(
      page.items.length === 1_000 && page.items.every((d) => d.endpointId !== endpointId),
      `the log still lists deliveries of the deleted ${endpointId}`,
    );
    return {
      perK: ms / (rows / 1000),
      loopP99: loopDelayMs(loop.percentile(99) / 1e6, LOOP_SAMPLE_MS),
      otherMax: slowest,
    };
  };
  const steps = await measure('ep_000002', (id) => sender.deleteEndpoint(ACCOUNT, id));
  const whole = await measure('ep_000003', (id) => store.deleteEndpoint(ACCOUNT, id));
  await sender.stop(0);
  check((await store.endpointsBeingDeleted(10)).length === 0, 'a deletion was left unfinished');
  return {
    deletePerK: steps.perK,
    deleteLoopP99: steps.loopP99,
    deleteOtherMax: steps.otherMax,
    wholePerK: whole.perK,
    wholeOtherMax: whole.otherMax,
  };
}

/**
 * `change` timed until it and the steps it started are done (the pruning joins steps under way),
 * while each of `accounts` publishes one event after another through `sender`: the loop's delay p99
 * and longest stall meanwhile, and each account's slowest publish. The loop monitor ticks before
 * the change: one holding the loop from its first instant read as no delay at all otherwise.
 */
export async function whilePublishing(sender, accounts, change) {
  let going = true;
  const slowest = Object.fromEntries(accounts.map((a) => [a, 0]));
  const publishing = accounts.map(async (accountId) => {
    while (going) {
      const t = monotonicMs();
      await sender.publish(accountId, { event: 'click', data: sampleEventData('click') });
      slowest[accountId] = Math.max(slowest[accountId], monotonicMs() - t);
    }
  });
  const loop = monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS });
  loop.enable();
  await sleep(20);
  const t = monotonicMs();
  await change();
  await sender.pruneLog();
  const ms = monotonicMs() - t;
  loop.disable();
  going = false;
  await Promise.all(publishing);
  return {
    ms,
    loopP99: loopDelayMs(loop.percentile(99) / 1e6, LOOP_SAMPLE_MS),
    loopMax: loopDelayMs(loop.max / 1e6, LOOP_SAMPLE_MS),
    slowest,
  };
}

/**
 * Pausing and then resuming the queue account's endpoint (QUEUE_SHARE of the log, queued) through
 * the engine: its deliveries held, then made claimable again, in steps (design D34); each timed until
 * the last step (the pruning joins the steps under way), while another tenant and the endpoint's own
 * account publish one event after another (on PostgreSQL each publish to the paused endpoint
 * share-locks it). With the loop's delay and the slowest publish of each.
 */
async function timePause(createSender, store, n) {
  const sender = createSender({ store });
  const queued = n * QUEUE_SHARE;
  const measure = async (change) => {
    const m = await whilePublishing(sender, [OTHER, QUEUE_ACCOUNT], change);
    return {
      perK: m.ms / (queued / 1000),
      loopP99: m.loopP99,
      loopMax: m.loopMax,
      otherMax: m.slowest[OTHER],
      ownMax: m.slowest[QUEUE_ACCOUNT],
    };
  };
  const pause = await measure(() => sender.pauseEndpoint(QUEUE_ACCOUNT, 'ep_queue'));
  const held = (await store.stats()).queued.held;
  check(held >= queued, `the pause held ${held} deliveries, not ${queued} or more`);
  const resume = await measure(() => sender.resumeEndpoint(QUEUE_ACCOUNT, 'ep_queue'));
  check((await store.stats()).queued.held === 0, 'the resume left deliveries held');
  check((await store.endpointsSettling(10)).length === 0, 'a move of deliveries was left unfinished');
  await sender.stop(0);
  return { pause, resume };
}

/**
 * Both sizes of one store: filled (dated from `now`), their reads timed in turn, then each pruned,
 * then one endpoint of each deleted.
 */
async function measurePair(label, now, createSender, open) {
  const stores = [];
  try {
    for (const n of [SCALE.small, SCALE.large]) stores.push({ n, store: await open(n) });
    const reads = await timeReads(stores, createSender);
    const results = [];
    for (const [k, { store, n }] of stores.entries()) {
      const pruned = await timePrune(store, n, now);
      results.push({
        label,
        n,
        ...reads[k],
        ...pruned,
        ...(await timeEndpointDeletion(createSender, store, n)),
        ...(await timePause(createSender, store, n)),
      });
    }
    return results;
  } finally {
    for (const { store } of stores) await store.close();
  }
}

/**
 * A SQLite file at `file` migrated by `createSqliteStore` (a build's) and filled with a log of `n`
 * deliveries dated from `now` (fill-log.mjs, in a child process).
 */
export async function fillSqliteLog(createSqliteStore, file, n, now) {
  const store = createSqliteStore({ filename: file });
  await store.migrate();
  await store.close();
  await runChild('./fill-log.mjs', [file, String(n), String(now)]);
}

export async function runScale({ createSender, createSqliteStore, createPostgresStore, postgres, pgUrl }) {
  const now = Date.now();
  const dir = tempDir('linkhooks-bench-scale-');
  const results = await measurePair('SQLite', now, createSender, async (n) => {
    const file = join(dir, `log-${n}.db`);
    await fillSqliteLog(createSqliteStore, file, n, now);
    return createSqliteStore({ filename: file });
  });
  if (postgres && createPostgresStore) {
    results.push(
      ...(await measurePair('PostgreSQL', now, createSender, async (n) => {
        const schema = await postgres.schema(`scale${n}`);
        const pgStore = createPostgresStore({ connectionString: pgUrl, schema });
        await pgStore.migrate();
        await fillPostgres(pgUrl, schema, n, now);
        return pgStore;
      })),
    );
  }
  console.log(
    `\n6. Scale: a /metrics scrape (the engine's text, from its last count of the queue), a first and a deep (middle) page of 50,`,
  );
  console.log(
    `   an endpoint's failed (its oldest ten), a page by an event the log lacks, and a prune of a tenth of the log, with`,
  );
  console.log(
    `   ${fmtInt(SCALE.large)} deliveries beside ${fmtInt(SCALE.small)}; medians of ${SCALE.samples} calls, the two sizes' calls in turn (the prune once);`,
  );
  console.log(
    `   and the count of the queue behind a scrape (another account's, ${QUEUE_SHARE * 100}% of the log's size, read at most every 5 s),`,
  );
  console.log(
    "   with the loop's delay p99 over each count, the worst (SQLite counts on a thread of its own).",
  );
  console.log(
    '                       log  scrape ms   first ms   deep ms  failed ms   event ms   prune ms   per 1k ms   loop p99 ms',
  );
  for (const r of results) {
    console.log(
      `   ${r.label.padEnd(12)}${fmtInt(r.n).padStart(10)}${r.scrape.toFixed(2).padStart(11)}${r.first.toFixed(2).padStart(11)}${r.deep.toFixed(2).padStart(10)}${r.failed.toFixed(2).padStart(11)}${r.event.toFixed(2).padStart(11)}${r.prune.toFixed(0).padStart(11)}${r.prunePerK.toFixed(2).padStart(12)}${r.loopP99.toFixed(1).padStart(14)}`,
    );
  }
  console.log('                       log     queued   count ms   loop p99 ms');
  for (const r of results) {
    console.log(
      `   ${r.label.padEnd(12)}${fmtInt(r.n).padStart(10)}${fmtInt(r.n * QUEUE_SHARE).padStart(11)}${r.count.toFixed(2).padStart(11)}${r.countLoopP99.toFixed(1).padStart(14)}`,
    );
  }
  console.log(
    `\n   Then the deletion of an endpoint holding an eighth of what the prune left, in steps through the engine, beside`,
  );
  console.log(
    `   another's by one statement (SQLite) or transaction (PostgreSQL), the baseline; once each, while the endpoints'`,
  );
  console.log(
    "   own account and another tenant publish, one event after another (the other's slowest publish shown).",
  );
  console.log(
    '                       log   per 1k ms   loop p99 ms   other tenant max ms   baseline: per 1k ms   other tenant max ms',
  );
  for (const r of results) {
    console.log(
      `   ${r.label.padEnd(12)}${fmtInt(r.n).padStart(10)}${r.deletePerK.toFixed(2).padStart(12)}${r.deleteLoopP99.toFixed(1).padStart(14)}${r.deleteOtherMax.toFixed(0).padStart(22)}${r.wholePerK.toFixed(2).padStart(22)}${r.wholeOtherMax.toFixed(0).padStart(22)}`,
    );
  }
  console.log(
    `\n   Then a pause of the queue's endpoint (its ${QUEUE_SHARE * 100}% of the log held, in steps), and its resume (made claimable`,
  );
  console.log(
    '   again), each through the engine until its last step, while that account and another tenant publish one event',
  );
  console.log('   after another (the slowest publish of each shown).');
  console.log(
    '                       log   change   per 1k ms   loop p99 ms   loop max ms   other tenant max ms   own account max ms',
  );
  for (const r of results) {
    for (const change of ['pause', 'resume']) {
      const m = r[change];
      console.log(
        `   ${r.label.padEnd(12)}${fmtInt(r.n).padStart(10)}${change.padStart(9)}${m.perK.toFixed(2).padStart(12)}${m.loopP99.toFixed(1).padStart(14)}${m.loopMax.toFixed(1).padStart(14)}${m.otherMax.toFixed(0).padStart(22)}${m.ownMax.toFixed(0).padStart(21)}`,
      );
    }
  }
  const ratios = {};
  for (const label of ['SQLite', 'PostgreSQL']) {
    const small = results.find((r) => r.label === label && r.n === SCALE.small);
    const large = results.find((r) => r.label === label && r.n === SCALE.large);
    if (!small || !large) continue;
    ratios[label] = {
      scrape: large.scrape / small.scrape,
      count: large.count / small.count,
      countLoopP99: large.countLoopP99,
      first: large.first / small.first,
      deep: large.deep / small.deep,
      failed: large.failed / small.failed,
      event: large.event / small.event,
      prunePerK: large.prunePerK / small.prunePerK,
      deletePerK: large.deletePerK / small.deletePerK,
      loopP99: large.loopP99,
      deleteLoopP99: large.deleteLoopP99,
      pausePerK: large.pause.perK / small.pause.perK,
      resumePerK: large.resume.perK / small.resume.perK,
      pauseLoopP99: Math.max(large.pause.loopP99, large.resume.loopP99),
    };
    const r = ratios[label];
    console.log(
      `   ${label}: 1M / 10k — scrape ${r.scrape.toFixed(2)}× (the count behind it ${r.count.toFixed(0)}×, as the queue), first page ${r.first.toFixed(2)}×, deep page ${r.deep.toFixed(2)}×, failed page ${r.failed.toFixed(2)}×, event page ${r.event.toFixed(2)}×, prune per row ${r.prunePerK.toFixed(2)}×, endpoint deletion per row ${r.deletePerK.toFixed(2)}×, pause per row ${r.pausePerK.toFixed(2)}×, resume per row ${r.resumePerK.toFixed(2)}×`,
    );
  }
  return ratios;
}
