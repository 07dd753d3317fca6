/**
 * The worker: claims due deliveries in batches under a lease, runs their attempts concurrently,
 * and sleeps until the next one is due or it is woken (DESIGN: Engine). `tick()` runs everything
 * due right now and resolves when it is done — what virtual-time tests drive instead of the loop.
 */
import type { ClaimRequest } from '../store/port.js';
import type { ClaimedDelivery } from '../store/records.js';
import { type AttemptDeps, type AttemptReport, runAttempt } from './attempt.js';

export interface WorkerOptions extends AttemptDeps {
  /** Attempts in flight at once, across endpoints. */
  concurrency: number;
  /** Deliveries one endpoint may have in flight (DESIGN invariant 6). */
  perEndpointCap: number;
  /** Claimed at once. */
  batchSize: number;
  /** Longer than the attempt time-out (DESIGN invariant 3). */
  leaseMs: number;
  /** Longest idle sleep: how soon work scheduled by another process is noticed. */
  pollIntervalMs: number;
  onAttempt(report: AttemptReport): void;
  onError(error: unknown): void;
}

export interface Worker {
  /** Runs every delivery due now (as many rounds as it takes) and resolves with the attempt count. */
  tick(): Promise<number>;
  start(): void;
  /** Stops claiming; waits up to `graceMs` for attempts in flight, then releases the rest. */
  stop(graceMs?: number): Promise<void>;
  /** Something became due (a publish, a retry-now): look now instead of at the next poll. */
  wake(): void;
  readonly inFlight: number;
}

export function createWorker(options: WorkerOptions): Worker {
  const inFlight = new Map<string, { claim: ClaimedDelivery; done: Promise<void> }>();
  let running = false;
  let loop: Promise<void> | undefined;
  let wakeUp: (() => void) | undefined;
  let woken = false;

  const wake = () => {
    woken = true;
    wakeUp?.();
  };

  const launch = (claim: ClaimedDelivery) => {
    const done = runAttempt(options, claim)
      .then(options.onAttempt, options.onError)
      .finally(() => {
        inFlight.delete(claim.delivery.id);
        wake();
      });
    inFlight.set(claim.delivery.id, { claim, done });
  };

  const claim = (limit: number) => {
    const request: ClaimRequest = {
      now: options.clock.now(),
      limit,
      leaseMs: options.leaseMs,
      perEndpointCap: options.perEndpointCap,
    };
    return options.store.claimDue(request);
  };

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
  // delivery. Refilling only once a quarter of the slots is free (or when the loop wakes from its
  // timer) turns that into one claim per batch, while an idle worker still claims at once.
  const refillAt = Math.max(1, Math.min(options.batchSize, Math.floor(options.concurrency / 4)));

  async function run() {
    let timerFired = false;
    while (running) {
      try {
        const free = options.concurrency - inFlight.size;
        const room = Math.min(free, options.batchSize);
        let claimedAt = Number.NEGATIVE_INFINITY;
        if (room > 0 && (room >= refillAt || inFlight.size === 0 || timerFired)) {
          woken = false;
          claimedAt = options.clock.now();
          const claims = await claim(room);
          for (const c of claims) launch(c);
          if (claims.length === room) continue;
        }
        const next = free > 0 && room >= refillAt ? await options.store.nextDueAt() : null;
        if (!running) break;
        // Due by the time of the claim, yet not claimed: its endpoint is at its in-flight cap, and
        // the attempt that frees a slot will wake the loop. Polling for it every millisecond would
        // only hammer the database. Due since the claim: claim again now.
        if (next !== null && next > claimedAt && next <= options.clock.now()) continue;
        const wait = next === null || next <= claimedAt ? options.pollIntervalMs : next - options.clock.now();
        timerFired = await sleep(Math.max(1, Math.min(wait, options.pollIntervalMs)));
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
      for (;;) {
        const room = Math.min(options.concurrency - inFlight.size, options.batchSize);
        if (room > 0) {
          const claims = await claim(room);
          for (const c of claims) launch(c);
          attempts += claims.length;
        }
        if (inFlight.size === 0) return attempts;
        await Promise.race([...inFlight.values()].map((f) => f.done));
      }
    },
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop(graceMs = 30_000) {
      running = false;
      wake();
      await loop;
      const pending = [...inFlight.values()];
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
        // Whatever is still running is given back: another worker retries it once the lease is
        // released (at-least-once; a late result cannot overwrite it, invariant 3).
        await Promise.all(
          [...inFlight.values()].map((p) =>
            options.store.releaseLease(p.claim.delivery.id, p.claim.leaseToken),
          ),
        );
      }
    },
    wake,
  };
}
