/**
 * The worker: claims due deliveries in batches under a lease, runs their attempts concurrently,
 * and sleeps until the next one is due or it is woken (design D13). `tick()` runs everything
 * due right now and resolves when it is done — what virtual-time tests drive instead of the loop.
 */
import { createAbandon } from '../delivery/abandon.js';
import { accountAtOrigin } from '../store/pick-due.js';
import type { ClaimRequest, ClaimShares } from '../store/port.js';
import type { ClaimedDelivery } from '../store/records.js';
import { storeUnavailable } from '../store/unavailable.js';
import { traceAttempt, traceClaim } from '../tracing.js';
import { LARGE_BODY_BYTES } from '../turn-budget.js';
import { type AttemptDeps, type AttemptReport, runAttempt } from './attempt.js';
import { type BreakerChange, chooseProbes, createBreakers, heldBack } from './breakers.js';
import { createHeartbeat, type HeldLease } from './heartbeat.js';
import { originShares } from './origin-shares.js';
import { freeSlots as slotsFree, waitingAt } from './slots.js';

/** At most this long between a wake and a claim while fewer slots are free than a refill. */
const PARTIAL_REFILL_MS = 50;

/**
 * A claim at least this long after the last one with the accounts in turn takes them in turn
 * first (design D77): one account's backlog holds another's next delivery about this long, and a
 * claim that reads each endpoint's own deliveries runs at most ten times a second.
 */
export const ACCOUNTS_TURN_MS = 100;

/**
 * And no sooner than this many times as long as the last one took: a turn reads the endpoints with
 * something due, a few of each account's (3.0 ms on SQLite with 1,000 or more due, against 0.4 ms
 * for a claim in due order), so with many due, turns take at most a tenth of the worker's time. But
 * no later than ACCOUNTS_TURN_MAX_MS: what a turn takes is its wall time, and under load it waits
 * (for the loop, a database queue). Fifty times as long put turns off to the second bound under
 * load: a viral tenant's neighbour's p99 was 435 ms on SQLite and 918 ms on PostgreSQL (pnpm bench
 * part 7) against 125 and 243 ms every 100 ms. A turn that failed is not counted.
 */
export const TURN_COST_SHARE = 10;
export const ACCOUNTS_TURN_MAX_MS = 500;

export interface WorkerOptions extends AttemptDeps {
  /** Attempts in flight at once, across endpoints. */
  concurrency: number;
  /** Deliveries one endpoint may have in flight (design I6). */
  perEndpointCap: number;
  /** Of this worker's slots, the most one account's deliveries may hold (design D25). */
  perAccountCap: number;
  /** Of this worker's slots, the most requests to one origin (design D25). */
  perOriginCap: number;
  /** Of an origin's share, the most one account's requests there (design D25). */
  perAccountAtOriginCap: number;
  /** Claimed at once. */
  batchSize: number;
  /** How long a lease holds unless renewed (design I3). */
  leaseMs: number;
  /**
   * How often the leases of attempts in flight are renewed (the heartbeat); well under `leaseMs`,
   * so a live worker's leases never run out and a dead one's are free within `leaseMs`.
   */
  renewEveryMs: number;
  /** The longest sleep (SenderOptions.pollIntervalMs). */
  pollIntervalMs: number;
  /**
   * Free an attempt's slot as soon as its response is in, recording it beside the next request,
   * rather than once it is recorded: for a store a network round trip away (PostgreSQL).
   */
  freeSlotOnResponse: boolean;
  onAttempt(report: AttemptReport): void;
  /** A circuit breaker of this worker opened or closed (design D27). */
  onBreaker?(change: BreakerChange): void;
  onError(error: unknown): void;
}

export interface Worker {
  /** Runs every delivery due now (as many rounds as it takes) and resolves with the attempt count. */
  tick(): Promise<number>;
  start(): void;
  /**
   * Stops claiming; waits up to `graceMs` for attempts in flight, then releases the rest. With
   * `freeSlotOnResponse`, attempts already answered are not released: their records (a database
   * round trip each) are waited for, so their results are kept.
   */
  stop(graceMs?: number): Promise<void>;
  /** Something became due (a publish, a retry-now): look now instead of at the next poll. */
  wake(): void;
  readonly inFlight: number;
}

interface Running extends HeldLease {
  done: Promise<void>;
  /** When its request went out (performance.now()): out long enough, it holds no slot (slots.ts). */
  sentAt: number;
}

export function createWorker(options: WorkerOptions): Worker {
  // Every claimed delivery until its attempt is recorded. Only those still sending use one of the
  // `concurrency` slots; with `freeSlotOnResponse` a slot is free again as soon as the response is
  // in, while the record (a database round trip) goes on beside the next request. Attempts being
  // recorded are bounded too, by `concurrency` more, so a slow database slows claiming instead of
  // piling work up. A request out for a second or more, unanswered, holds no slot (slots.ts):
  // receivers that hang take no slot from anyone else. A set, not a map by delivery id: should a
  // lease expire mid-attempt and this worker claim the delivery again, both attempts are tracked
  // until each ends.
  const inFlight = new Set<Running>();
  // Those whose response is not in yet, in the order they went out (oldest first): what may wait
  // without a slot, read from the oldest until the first that has not waited long enough.
  const unanswered = new Set<Running>();
  let sending = 0;
  let running = false;
  let loop: Promise<void> | undefined;
  let wakeUp: (() => void) | undefined;
  let woken = false;

  const wake = () => {
    woken = true;
    wakeUp?.();
  };

  // The earliest due time this worker knows of that was not yet due at its last claim: a retry its
  // own attempts scheduled, or the store's answer when it last asked. What it sleeps until, rather
  // than ask the store, while requests of its own are out (run()). Only the earliest is kept: the
  // claim it falls due for asks the store for the next one.
  let knownDueAt = Number.POSITIVE_INFINITY;

  const launch = (claim: ClaimedDelivery) => {
    const running: Running = {
      claim,
      done: Promise.resolve(),
      sent: false,
      heldUntil: claim.leaseExpiresAt,
      abandon: createAbandon(),
      sentAt: performance.now(),
    };
    const sent = () => {
      if (running.sent) return;
      running.sent = true;
      sending--;
      wake();
    };
    const answered = () => {
      unanswered.delete(running);
      if (options.freeSlotOnResponse) sent();
    };
    sending++;
    running.done = traceAttempt(claim, () => runAttempt(options, claim, answered, running.abandon.signal))
      .then((report) => {
        // One never sent says nothing of the receiver, nor does an abandoned one (the worker cut it
        // short).
        if (!report.unsent) {
          if (report.applied.status === 'awaiting_retry')
            knownDueAt = Math.min(knownDueAt, report.applied.nextAttemptAt ?? Number.POSITIVE_INFINITY);
          if (!running.abandon.signal.aborted) breakers.observe(report, options.onBreaker);
        }
        options.onAttempt(report);
      })
      // What the attempt or the steps after it threw (a logger, say): nothing awaits `done` once
      // started, so a rejection left here would be unhandled and end the process.
      .catch(options.onError)
      .finally(() => {
        sent();
        unanswered.delete(running);
        inFlight.delete(running);
        wake();
      });
    inFlight.add(running);
    unanswered.add(running);
  };

  // A slot a request frees by waiting (slots.ts) is taken at the next claim: a publish's wake, a
  // request's end or the poll, whichever comes first.
  const freeSlots = () =>
    slotsFree({
      concurrency: options.concurrency,
      sending,
      unrecorded: inFlight.size,
      waiting: waitingAt(waitableSentAt(), performance.now()),
    });
  /** When the unanswered requests that may wait without a slot went out, oldest first: those of bodies up to LARGE_BODY_BYTES. */
  function* waitableSentAt() {
    for (const r of unanswered) if (r.claim.body.byteLength <= LARGE_BODY_BYTES) yield r.sentAt;
  }

  const breakers = createBreakers(options.clock);

  /**
   * This worker's requests open, per account, per origin and per account at an origin (design
   * D25): `claims` added to `into`.
   */
  const countOpen = (
    claims: Iterable<ClaimedDelivery>,
    into = {
      openByAccount: new Map<string, number>(),
      openByOrigin: new Map<string, number>(),
      openByAccountAtOrigin: new Map<string, number>(),
    },
  ) => {
    const add = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
    for (const { delivery, origin } of claims) {
      add(into.openByAccount, delivery.accountId);
      add(into.openByOrigin, origin);
      add(into.openByAccountAtOrigin, accountAtOrigin(delivery.accountId, origin));
    }
    return into;
  };
  /** The claims of the requests still sending (not yet answered). */
  function* sendingClaims() {
    for (const r of inFlight) if (!r.sent) yield r.claim;
  }
  /** Those still sending. */
  const open = () => countOpen(sendingClaims());

  /**
   * Up to `limit` deliveries: first a probe of each endpoint whose breaker is half-open (design
   * D27, chooseProbes), then, when a turn is due (nextTurnAt), the accounts' first ones in turn
   * (design D77), then the rest in due order, what was taken before counted in the shares.
   */
  const claim = (limit: number) =>
    traceClaim(limit, async () => {
      const now = options.clock.now();
      const breaking = breakers.caps(options.perEndpointCap, options.perAccountAtOriginCap);
      const opened = open();
      // The shares with what is open now (turns and probes taken before a claim counted in `opened`),
      // an origin's divided among the accounts there (originShares).
      const shares = (): ClaimShares => {
        const base = {
          perAccount: options.perAccountCap,
          perOrigin: options.perOriginCap,
          perAccountAtOrigin: options.perAccountAtOriginCap,
          ...opened,
        };
        const { perOrigin, ...capped } = originShares(base, breaking.capped.accountsAtOrigins);
        return { ...base, perOrigin, capped: { endpoints: breaking.capped.endpoints, ...capped } };
      };
      let probes: ClaimedDelivery[] = [];
      if (breaking.probing.length > 0) {
        const busy = new Set([...inFlight].map((r) => r.claim.delivery.endpointId));
        const endpointIds = chooseProbes(breaking.probing, shares(), busy, limit);
        if (endpointIds.length > 0) {
          probes = await options.queue.claimProbes({ now, leaseMs: options.leaseMs, endpointIds });
          const taken = new Set(probes.map((p) => p.delivery.endpointId));
          breakers.missed(endpointIds.filter((id) => !taken.has(id)));
          countOpen(probes, opened); // the claim that follows counts them in the shares
        }
      }
      if (probes.length >= limit) return probes;
      const request = (taken: number): ClaimRequest => ({
        now,
        limit: limit - taken,
        leaseMs: options.leaseMs,
        perEndpointCap: options.perEndpointCap,
        // Their requests are over: they no longer count against their endpoints' caps (invariant 6).
        // Read at each claim: more may have ended while the turn before it was out.
        finishing: [...inFlight]
          .filter((r) => r.sent)
          .map((r) => ({ deliveryId: r.claim.delivery.id, leaseToken: r.claim.leaseToken })),
        shares: shares(),
      });
      let turn: ClaimedDelivery[] = [];
      let turnFailed: unknown;
      const started = performance.now();
      if (started >= nextTurnAt) {
        nextTurnAt = started + ACCOUNTS_TURN_MS;
        try {
          const taken = await options.queue.claimTurn({ ...request(probes.length), after: turnAfter });
          turn = taken.claimed;
          turnAfter = taken.next;
          const spacing = TURN_COST_SHARE * (performance.now() - started);
          nextTurnAt = started + Math.min(Math.max(ACCOUNTS_TURN_MS, spacing), ACCOUNTS_TURN_MAX_MS);
        } catch (error) {
          // The store out of reach: a claim in due order would wait as long again.
          if (storeUnavailable(error)) {
            if (probes.length === 0) throw error;
            options.onError(error);
            return probes;
          }
          turnFailed = error; // the claim in due order is made all the same
        }
        countOpen(turn, opened); // the claim that follows counts them in the shares
      }
      let rest: ClaimedDelivery[] = [];
      try {
        const taken = probes.length + turn.length;
        if (taken < limit) rest = await options.queue.claimDue(request(taken));
      } catch (error) {
        if (probes.length + turn.length === 0) throw error;
        // What it took is leased: sent now, not left to the leases' expiry.
        options.onError(error);
      }
      if (turnFailed !== undefined) options.onError(turnFailed);
      // The breakers read once both claims are in: one may have opened while the second was out.
      return [...probes, ...launchable(turn.length === 0 ? rest : [...turn, ...rest])];
    });
  /** When the next claim with the accounts in turn is due (performance.now()). */
  let nextTurnAt = Number.NEGATIVE_INFINITY;
  /** Where the next one starts: the cursor the one before answered (ClaimedTurn's `next`). */
  let turnAfter = '';

  /** Leases given back by launchable, still being released: stop() waits for them. */
  const releasing = new Set<Promise<void>>();
  /** A claim's deliveries its breakers still let out; the rest given back at once (heldBack). */
  const launchable = (claims: ClaimedDelivery[]): ClaimedDelivery[] => {
    const breaking = breakers.caps(options.perEndpointCap, options.perAccountAtOriginCap);
    if (breaking.capped.endpoints.size === 0 && breaking.capped.accountsAtOrigins.size === 0) return claims;
    const back = new Set(heldBack(claims, breaking, sendingClaims()));
    for (const c of back) {
      // Released, it is claimable again at once: a later claim finds it behind the breaker's cap.
      const release = options.queue
        .releaseLease(c.delivery.id, c.leaseToken)
        .catch(options.onError)
        .finally(() => releasing.delete(release));
      releasing.add(release);
    }
    return back.size === 0 ? claims : claims.filter((c) => !back.has(c));
  };

  const heartbeat = createHeartbeat(options, () => [...inFlight]);

  /** Resolves true when the timer ran out, false when woken. */
  const sleep = (ms: number) =>
    new Promise<boolean>((resolve) => {
      if (woken) {
        woken = false;
        resolve(false);
        return;
      }
      const timer = setTimeout(() => finish(true), ms);
      function finish(timedOut: boolean) {
        clearTimeout(timer);
        wakeUp = undefined;
        woken = false;
        resolve(timedOut);
      }
      wakeUp = () => finish(false);
    });

  // Under load, attempts finish one by one; claiming for each would cost one claim query per
  // delivery. Refilling only once half the slots are free (or a batch's worth, or when the loop
  // wakes from its timer, or nothing is sending) turns that into one claim per batch, while an idle
  // worker still claims at once. Measured with the benchmark: a quarter made twice the claims on
  // PostgreSQL for no more deliveries.
  const refillAt = Math.max(1, Math.min(options.batchSize, Math.floor(options.concurrency / 2)));

  async function run() {
    let timerFired = false;
    // Fewer slots free than refillAt, yet woken: claimed at most PARTIAL_REFILL_MS after the last
    // claim. An account at its share leaves the other accounts the rest of the slots (design
    // D25), and their new deliveries must not wait for the poll; one claim per interval at most.
    let wokenSinceClaim = false;
    let lastClaimAt = Number.NEGATIVE_INFINITY;
    // The due time it knew of fell due at a claim: what falls due after it is unknown until it asks
    // the store, however many claims that takes.
    let knownDueFell = false;
    while (running) {
      try {
        const free = freeSlots();
        const room = Math.min(free, options.batchSize);
        const partialDue = wokenSinceClaim && performance.now() - lastClaimAt >= PARTIAL_REFILL_MS;
        let claimedAt = Number.NEGATIVE_INFINITY;
        if (room > 0 && (room >= refillAt || sending === 0 || timerFired || partialDue)) {
          woken = false;
          wokenSinceClaim = false;
          lastClaimAt = performance.now();
          claimedAt = options.clock.now();
          if (knownDueAt <= claimedAt) {
            knownDueAt = Number.POSITIVE_INFINITY; // this claim sees it
            knownDueFell = true;
          }
          const claims = await claim(room);
          for (const c of claims) launch(c);
          if (claims.length === room) continue;
        }
        // Requests of its own out (whatever the last claim took): each one that ends wakes the loop,
        // whose next claim takes what has become due meanwhile; while none ends, it sleeps until the
        // earliest due time it knows of. Work from elsewhere wakes it (a publish), or is
        // found at the claim the next request's end brings, or at the poll. Asking the store for the
        // next due time after every such claim was a tenth of PostgreSQL's work in a delivery burst.
        // Woken while it claimed (a claim is a transaction queued or a round trip away), it claims
        // again instead of asking. With fewer than refillAt slots free it neither asks nor claims:
        // the requests that end free the slots, and wake it.
        let next: number | null = null;
        if (free > 0 && room >= refillAt && !woken) {
          if (sending === 0 || knownDueFell) {
            next = await options.queue.nextDueAt();
            knownDueFell = false;
            // What it sleeps until from now on, whatever wakes it first (a request of its own that
            // ends leaves it asking nothing while others are out).
            if (next !== null && next > claimedAt) knownDueAt = Math.min(knownDueAt, next);
          } else if (Number.isFinite(knownDueAt)) next = knownDueAt;
        }
        if (!running) break;
        // Due by the time of the claim, yet not claimed: its endpoint is at its in-flight cap, and
        // the attempt that frees a slot will wake the loop. Polling for it every millisecond would
        // only hammer the database. Due since the claim: claim again now.
        if (next !== null && next > claimedAt && next <= options.clock.now()) continue;
        let wait = next === null || next <= claimedAt ? options.pollIntervalMs : next - options.clock.now();
        if (room > 0 && wokenSinceClaim)
          wait = Math.min(wait, lastClaimAt + PARTIAL_REFILL_MS - performance.now());
        timerFired = await sleep(Math.max(1, Math.min(wait, options.pollIntervalMs)));
        if (!timerFired) wokenSinceClaim = true;
      } catch (error) {
        options.onError(error);
        timerFired = await sleep(options.pollIntervalMs);
      }
    }
  }

  return {
    get inFlight() {
      return inFlight.size;
    },
    async tick() {
      let attempts = 0;
      // Its attempts' leases are renewed as the loop's are: an attempt can outlast its lease.
      if (!running) heartbeat.start();
      try {
        for (;;) {
          const room = Math.min(freeSlots(), options.batchSize);
          if (room > 0) {
            const claims = await claim(room);
            for (const c of claims) launch(c);
            attempts += claims.length;
          }
          if (inFlight.size === 0) return attempts;
          await Promise.race([...inFlight].map((f) => f.done));
        }
      } finally {
        if (!running) heartbeat.stop();
      }
    },
    start() {
      if (running) return;
      running = true;
      heartbeat.start();
      loop = run();
    },
    async stop(graceMs = 30_000) {
      running = false;
      wake();
      await loop;
      // The heartbeat stops however the attempts end, a failed release included.
      try {
        await finishInFlight(graceMs);
      } finally {
        heartbeat.stop();
      }
      // Leases given back as the loop claimed: released before the store may close.
      await Promise.all(releasing);
    },
    wake,
  };

  async function finishInFlight(graceMs: number) {
    const pending = [...inFlight];
    if (pending.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<'grace'>((resolve) => {
      timer = setTimeout(() => resolve('grace'), graceMs);
    });
    const finished = await Promise.race([
      Promise.all(pending.map((p) => p.done)).then(() => 'done' as const),
      grace,
    ]);
    clearTimeout(timer);
    if (finished === 'grace') {
      // Requests still out are given back: another worker retries them once the lease is
      // released (at-least-once; a late result cannot overwrite it, invariant 3). Attempts whose
      // response is in are being recorded: releasing them would throw their results away, so
      // their records (a database round trip each) are waited for instead.
      const left = [...inFlight];
      await Promise.all([
        ...left
          .filter((p) => !p.sent)
          .map((p) => {
            p.abandon.abort(); // given back: its late answer must not be recorded
            return options.queue.releaseLease(p.claim.delivery.id, p.claim.leaseToken);
          }),
        ...left.filter((p) => p.sent).map((p) => p.done),
      ]);
    }
  }
}
