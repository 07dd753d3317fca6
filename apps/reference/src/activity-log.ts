/**
 * What the terminal shows while the app runs. Verified deliveries are many and alike: they are
 * counted and summed up in one line every few seconds, so the banner stays on screen. Failures and
 * state changes are what the user watches for: each failed attempt gets its own line at once, with
 * where its endpoint stands toward being disabled.
 */
import type { AttemptMade, AttemptReport } from '@linkhooks/sender';
import type { ReceivedEvent, ReceiverMode } from './sample-receiver.js';

export interface ActivityLogOptions {
  log: (line: string) => void;
  /** Attempts a delivery gets in all. */
  maxAttempts: number;
  /** Failed deliveries in a row that disable an endpoint. */
  disableAfter: number;
  /** How long all of a delivery's attempts take at this run's time scale, in ms. */
  scheduleMs: number;
  summaryEveryMs?: number;
  now?: () => number;
}

export interface ActivityLog {
  verified(received: ReceivedEvent): void;
  attempt(report: AttemptReport): void;
  modeChanged(mode: ReceiverMode): void;
  /** Prints the pending summary and stops the timer. */
  stop(): void;
}

export function createActivityLog(options: ActivityLogOptions): ActivityLog {
  const { log, maxAttempts, disableAfter } = options;
  const now = options.now ?? Date.now;
  const everyMs = options.summaryEveryMs ?? 5_000;
  let verified = 0;
  let retried = 0;
  let since = now();
  /** Endpoints last reported with failed deliveries, so their recovery is reported too. */
  const failing = new Map<string, number>();

  const summarise = () => {
    if (verified > 0) {
      const seconds = Math.round((now() - since) / 1000);
      const retries = retried > 0 ? ` (${retried} on a retry)` : '';
      log(
        `receiver: verified ${plural(verified, 'delivery', 'deliveries')} in the last ${seconds} s${retries}`,
      );
    }
    verified = 0;
    retried = 0;
    since = now();
  };
  const timer = setInterval(summarise, everyMs);
  timer.unref();

  return {
    verified(received) {
      verified++;
      if ((received.attempt ?? 1) > 1) retried++;
    },

    attempt(report) {
      // Given back unsent, nothing was attempted; not recorded, another worker took the delivery
      // over and reports it.
      if (report.unsent || !report.applied.applied) return;
      const { claim, attempt, applied } = report;
      const { delivery } = claim;
      const what = `${delivery.eventName} ${delivery.id}`;
      if (!attempt.failureKind) {
        const count = failing.get(delivery.endpointId);
        if (count === undefined) return;
        failing.delete(delivery.endpointId);
        const reset = count > 0 ? '; its failed deliveries in a row are back to 0' : '';
        log(`sender: ✓ endpoint ${delivery.endpointId} delivers again${reset}`);
        return;
      }
      const why = reason(attempt);
      const disabled = applied.disabledEndpoint;
      if (disabled) {
        log(
          `sender: ✗ ${what} failed after ${maxAttempts} attempts (${why}); endpoint ${disabled.id}: ` +
            `${disabled.consecutiveFailures} of ${disableAfter} failed deliveries in a row`,
        );
        log(
          `sender: endpoint ${disabled.id} disabled after ${disabled.consecutiveFailures} failed deliveries in a row; ` +
            `its new events are skipped until it is re-enabled (dashboard, or POST /v1/endpoints/${disabled.id}/enable)`,
        );
        failing.delete(disabled.id);
        return;
      }
      if (applied.status === 'failed') {
        // The count this failure left, recorded with it: a read of the endpoint now could already
        // see the failures recorded after it.
        const count = applied.endpointFailures ?? 0;
        failing.set(delivery.endpointId, count);
        log(
          `sender: ✗ ${what} failed after ${maxAttempts} attempts (${why}); endpoint ${delivery.endpointId}: ` +
            `${count} of ${disableAfter} failed deliveries in a row`,
        );
        return;
      }
      const next =
        applied.status === 'held'
          ? 'held while its endpoint is disabled'
          : applied.nextAttemptAt != null
            ? `next in ${duration(applied.nextAttemptAt - now())}`
            : `now ${applied.status}`;
      failing.set(delivery.endpointId, failing.get(delivery.endpointId) ?? 0);
      log(`sender: ✗ ${what} attempt ${attempt.number} of ${maxAttempts} failed (${why}); ${next}`);
    },

    modeChanged(mode) {
      log(`receiver: switched to ${mode}`);
      if (mode === 'ok') return;
      log(
        `receiver: each failed attempt is shown as it happens; a delivery fails after ${maxAttempts} attempts ` +
          `(${duration(options.scheduleMs)} at this time scale), and ${disableAfter} failed deliveries in a row ` +
          'disable the endpoint',
      );
    },

    stop() {
      clearInterval(timer);
      summarise();
    },
  };
}

function reason(attempt: AttemptMade['attempt']): string {
  if (attempt.failureKind === 'http_status') return `HTTP ${attempt.statusCode}`;
  if (attempt.failureKind === 'timeout') return 'no answer in time';
  const detail = attempt.errorMessage ? `: ${attempt.errorMessage.slice(0, 80)}` : '';
  return `${attempt.failureKind}${detail}`;
}

function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 120) return `${Math.round(s)} s`;
  return `${(s / 60).toFixed(1)} min`;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
