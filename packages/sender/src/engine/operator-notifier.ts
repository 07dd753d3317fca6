/**
 * Sends the operator notices (design D50): claims the due ones from the store's outbox, signs
 * their stored bytes as deliveries are signed (design R9, D32), POSTs them to the operator URL and
 * records the outcome, which the store turns into the deliveries' schedule. This file only moves
 * bytes.
 */
import { isStandardWebhooksSecret } from '@linkhooks/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { DeliveryClient } from '../delivery/http-client.js';
import { signatureHeaders } from '../delivery/signature-headers.js';
import type { RetrySchedule } from '../domain/schedule.js';
import type { ClaimedNotice, NoticeOutbox } from '../store/notice-port.js';
import type { OperatorSettings } from './operator-options.js';

export interface NotifierDeps {
  outbox: NoticeOutbox;
  client: DeliveryClient;
  clock: Clock;
  settings: OperatorSettings;
  schedule: RetrySchedule;
  /** Longer than a request can be out (longestRequestMs): no heartbeat renews it. */
  leaseMs: number;
  pollIntervalMs: number;
  userAgent: string;
  logger: Logger;
}

export interface OperatorNotifier {
  /** Sends every notice due now; resolves with how many were attempted (none given back unsent). */
  tick(): Promise<number>;
  wake(): void;
  start(): void;
  stop(): Promise<void>;
}

const CLAIM_LIMIT = 16;

/** X-Service-Signature always; the Standard Webhooks headers when the secret is of their form. */
export function noticeHeaders(
  notice: ClaimedNotice,
  secret: string,
  userAgent: string,
  now: number,
): Record<string, string> {
  const standard = isStandardWebhooksSecret(secret) ? { id: notice.id, secrets: [secret], now } : null;
  return {
    ...signatureHeaders(notice.body, secret, standard),
    'x-service-notice-id': notice.id,
    'x-service-attempt': String(notice.attempts + 1),
    'user-agent': userAgent,
  };
}

/**
 * The notices of each endpoint claimed together, oldest first (ids sort by creation): one
 * endpoint's go out one after the other, so a disabling does not overtake the warning made before
 * it in the same claim; different endpoints' go out side by side. A notice that fails is retried
 * later, and may then arrive after newer ones: `occurred_at` orders them (design D50).
 */
export function inOrderPerEndpoint(notices: readonly ClaimedNotice[]): ClaimedNotice[][] {
  const groups = new Map<string, ClaimedNotice[]>();
  for (const notice of [...notices].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    const key = endpointOf(notice) ?? notice.id;
    const group = groups.get(key);
    if (group) group.push(notice);
    else groups.set(key, [notice]);
  }
  return [...groups.values()];
}

/** The endpoint a notice is about, from the bytes stored with it. */
function endpointOf(notice: ClaimedNotice): string | null {
  try {
    const parsed = JSON.parse(Buffer.from(notice.body).toString('utf8')) as { endpoint_id?: unknown };
    return typeof parsed.endpoint_id === 'string' ? parsed.endpoint_id : null;
  } catch {
    return null;
  }
}

export function createOperatorNotifier(deps: NotifierDeps): OperatorNotifier {
  const { outbox, client, clock, settings, logger } = deps;
  let running = false;
  let loop: Promise<void> | null = null;
  let wakeUp: (() => void) | null = null;

  /** Sends and records `notice`; false when it was given back unsent. */
  async function send(notice: ClaimedNotice): Promise<boolean> {
    const headers = noticeHeaders(notice, settings.secret, deps.userAgent, clock.now());
    const { outcome, unsent } = await client.send({ url: settings.url, body: notice.body, headers });
    if (unsent) {
      // Never written (it waited for a connection behind the others): not an attempt. Its lease
      // runs out and a later claim sends it.
      logger.info({ notice: notice.id, type: notice.type }, 'an operator notice was not sent; it will be');
      return false;
    }
    const status = await outbox.recordNotice({
      notice,
      succeeded: outcome.ok,
      statusCode: outcome.statusCode ?? null,
      error: outcome.ok ? null : outcome.message,
      now: clock.now(),
      schedule: deps.schedule,
    });
    if (status === 'failed') {
      logger.error(
        { notice: notice.id, type: notice.type },
        'an operator notice failed after its last attempt',
      );
    } else if (status === 'awaiting_retry') {
      logger.warn({ notice: notice.id, type: notice.type }, 'an operator notice failed; it will be retried');
    }
    return true;
  }

  async function tick(): Promise<number> {
    let sent = 0;
    for (;;) {
      const claims = await outbox.claimNotices({
        now: clock.now(),
        limit: CLAIM_LIMIT,
        leaseMs: deps.leaseMs,
      });
      if (claims.length === 0) return sent;
      // One endpoint's go one after another under the one lease, which covers one request: one
      // after a slow one may still be out when the lease ends, and another process may then send
      // it too (notices are at least once: the operator drops repeats by notice_id). One given
      // back unsent holds back the rest, which go after it at a later claim, in order.
      await Promise.all(
        inOrderPerEndpoint(claims).map(async (notices) => {
          for (const notice of notices) {
            if (!(await send(notice))) return;
            sent++;
          }
        }),
      );
    }
  }

  async function run(): Promise<void> {
    while (running) {
      await tick().catch((error: unknown) => logger.error({ err: error }, 'operator notifier error'));
      if (!running) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deps.pollIntervalMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = null;
    }
  }

  return {
    tick,
    wake: () => wakeUp?.(),
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      wakeUp?.();
      await loop;
      loop = null;
    },
  };
}
