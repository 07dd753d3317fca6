/**
 * The engine's options, checked once at start-up: a bad setting fails loudly with a clear error
 * rather than retrying oddly later.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { LookupFunction } from '../delivery/address-guard.js';
import type { DeliveryClient } from '../delivery/http-client.js';
import { connectionsAt, fewAtOrigin } from '../delivery/origin-requests.js';
import { DEFAULT_DISABLE_POLICY, type DisablePolicy } from '../domain/disable-rule.js';
import { DEFAULT_RECEIVER_POLICY } from '../domain/receiver-hints.js';
import { ATTEMPT_TIMEOUT_MS, assertSchedule, RETRY_DELAYS_MS } from '../domain/schedule.js';
import type { TransitionRules } from '../domain/transition.js';
import { SenderError } from '../errors.js';
import type { SenderStore } from '../store/port.js';
import type { EndpointRecord } from '../store/records.js';
import type { AttemptReport } from '../worker/attempt.js';
import { type OperatorNotifications, type OperatorSettings, operatorSettings } from './operator-options.js';
import { checkQuotas, type Quotas } from './quotas.js';

export interface SenderOptions {
  store: SenderStore;
  clock?: Clock;
  /** Retry delays in ms (design R12 by default). */
  retryDelaysMs?: readonly number[];
  /** Multiplies the retry delays: 0.001 runs the whole schedule in ~38 s (demos, checks). */
  timeScale?: number;
  /** Default: 10 failed deliveries in a row (design D1). */
  disablePolicy?: Partial<DisablePolicy>;
  /**
   * A `410 Gone` answer disables its endpoint at once, with `disabled_reason: "gone"` (design
   * D41). Default false: a 410 is one failure like any other.
   */
  disableOnGone?: boolean;
  /** Whole-attempt deadline. Default 30 s (design R11). */
  attemptTimeoutMs?: number;
  /**
   * How long a claim's lease holds unless renewed. Workers renew the leases of their attempts every
   * third of it (the heartbeat), so a killed worker's deliveries are taken over within it. Default 10 s.
   */
  leaseMs?: number;
  /**
   * Attempts in flight at once on this engine. Default 64. A request out for a second or more holds
   * no slot, up to eight times as many (design D25).
   */
  concurrency?: number;
  /** Deliveries one endpoint may have in flight, across workers. Default 8. */
  perEndpointCap?: number;
  /**
   * Of this engine's `concurrency`, the most one account's deliveries may hold (design D25), so
   * that one customer's hanging endpoints leave the rest to the others. Default all but a reserve
   * of max(8, concurrency / 8): 56 of 64.
   */
  perAccountCap?: number;
  /**
   * Of this engine's `concurrency`, the most requests open to one origin (scheme, host, port)
   * (design D25). Default as `perAccountCap`.
   */
  perOriginCap?: number;
  /**
   * Of an origin's `perOriginCap`, the most one account's requests there may hold, and the accounts
   * there together (design D25): the rest goes a request at a time to accounts with none there,
   * so that at a server many customers share, customers' hanging requests leave room for the
   * others'. Default all but a reserve of min(8, a quarter of it rounded up), at least 1: 48 of 56.
   */
  perAccountAtOriginCap?: number;
  batchSize?: number;
  /**
   * The longest the worker and the operator notifier sleep when nothing wakes them: how soon work
   * scheduled by another process is noticed where no wake-up reaches this one. Default 1,000.
   */
  pollIntervalMs?: number;
  /** Development only: deliver to loopback and private networks. Never plain HTTP. */
  allowPrivateNetworks?: boolean;
  /** Extra CA certificates to trust (a test CA). */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Name resolution, for tests. */
  resolve?: LookupFunction;
  /**
   * Send the deliveries' requests from a worker thread of their own (TLS, HTTP parsing and socket
   * writes off the event loop, which the store and the API then have to themselves), as the
   * service does on SQLite. Default false. Not with `resolve`, which cannot reach another thread. The
   * thread's program is `dist/delivery-thread.js`, beside the package's entry points.
   */
  deliveryThread?: boolean;
  /** Replace the HTTP client (tests). */
  client?: DeliveryClient;
  /**
   * Told when an endpoint is disabled automatically, in this process, after the commit; the
   * operator notice `endpoint.disabled` is written in that same transaction.
   */
  onEndpointDisabled?: (endpoint: EndpointRecord) => void | Promise<void>;
  /**
   * Signed notices to the platform about endpoints' health (design D50): `endpoint.failing`,
   * `endpoint.disabled`, `endpoint.enabled`, durable and retried on the deliveries' schedule.
   */
  operatorNotifications?: OperatorNotifications;
  /**
   * Told of every claimed delivery's request: an attempt (`AttemptMade`: `report.attempt`, and
   * `report.applied.applied` false when the worker lost or gave back its lease and recorded
   * nothing), or a request given back unsent (`AttemptUnsent`, `report.unsent`: its deadline
   * passed while it waited for a connection), which holds no attempt. What the hook throws or
   * rejects with is logged.
   */
  onAttempt?: (report: AttemptReport) => void;
  logger?: Logger;
  /** How long final deliveries stay in the log. Default 30 days. */
  retentionMs?: number;
  /**
   * Encrypts endpoint secrets at rest (AES-256-GCM): 32 bytes as hex or base64, e.g. the
   * service's LINKHOOKS_MASTER_KEY. With it, a secret stored unencrypted is refused until
   * `sealSecrets()` has encrypted it. Without it (tests, trials), secrets are stored as they are,
   * a warning is logged, and a store holding encrypted ones refuses to hand them out rather than
   * sign with ciphertext.
   */
  masterKey?: string;
  /**
   * Keys secrets may still be sealed with while a rotation runs: they are opened, never used to
   * encrypt; `sealSecrets()` moves them under `masterKey`.
   */
  previousMasterKeys?: readonly string[];
  /** What one account may use: endpoints, events per second, test sends and retries per minute. */
  quotas?: Partial<Quotas>;
}

export interface Settings {
  rules: TransitionRules;
  timeoutMs: number;
  leaseMs: number;
  renewEveryMs: number;
  concurrency: number;
  perEndpointCap: number;
  perAccountCap: number;
  perOriginCap: number;
  perAccountAtOriginCap: number;
  batchSize: number;
  pollIntervalMs: number;
  retentionMs: number;
  quotas: Quotas;
  /** Where and how the operator is notified; null when it is not. */
  operator: OperatorSettings | null;
  deliveryThread: boolean;
}

const DEFAULT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const DEFAULT_LEASE_MS = 10_000;
const MIN_LEASE_MS = 1_500;

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1)
    throw new SenderError('invalid_option', `${name} must be a whole number above 0, got ${String(v)}`);
  return v;
}

export type SlotOptions = Pick<
  SenderOptions,
  'concurrency' | 'perEndpointCap' | 'perAccountCap' | 'perOriginCap' | 'perAccountAtOriginCap'
>;

/** The worker's slots (design D25): those given, checked, and the defaults for the rest. */
export function slotsOf(options: SlotOptions): Required<SlotOptions> {
  const concurrency = positiveInt('concurrency', options.concurrency, 64);
  // One account or origin may fill all but a reserve of the slots: alone it runs nearly at full
  // speed, and the reserve is always left to the others (design D25).
  const share = Math.max(1, concurrency - Math.max(8, Math.floor(concurrency / 8)));
  const perOriginCap = positiveInt('perOriginCap', options.perOriginCap, share);
  // Within an origin, a reserve as large as the second pool's few (8 of its 16 connections), at
  // most a quarter of the origin's share, rounded up: one account's hanging requests there leave
  // room for the others', which that pool then sends at once (design D25).
  const few = fewAtOrigin(connectionsAt(perOriginCap));
  const atOrigin = Math.max(1, perOriginCap - Math.ceil(Math.min(few, perOriginCap / 4)));
  return {
    concurrency,
    perEndpointCap: positiveInt('perEndpointCap', options.perEndpointCap, 8),
    perAccountCap: positiveInt('perAccountCap', options.perAccountCap, share),
    perOriginCap,
    perAccountAtOriginCap: positiveInt('perAccountAtOriginCap', options.perAccountAtOriginCap, atOrigin),
  };
}

export function settingsOf(options: SenderOptions): Settings {
  const schedule = { delaysMs: options.retryDelaysMs ?? RETRY_DELAYS_MS, timeScale: options.timeScale ?? 1 };
  assertSchedule(schedule);
  const timeoutMs = positiveInt('attemptTimeoutMs', options.attemptTimeoutMs, ATTEMPT_TIMEOUT_MS);
  const leaseMs = positiveInt('leaseMs', options.leaseMs, DEFAULT_LEASE_MS);
  if (leaseMs < MIN_LEASE_MS) {
    // Renewed every third of it: shorter, and a busy event loop could miss a renewal (design I3).
    throw new SenderError('invalid_option', `leaseMs must be at least ${MIN_LEASE_MS} ms`);
  }
  const policy = { ...DEFAULT_DISABLE_POLICY, ...options.disablePolicy };
  const operator = operatorSettings(options.operatorNotifications, policy.threshold);
  const deliveryThread = options.deliveryThread ?? false;
  if (deliveryThread && options.resolve) {
    throw new SenderError(
      'invalid_option',
      'deliveryThread cannot be used with resolve: a function cannot reach the thread',
    );
  }
  return {
    rules: {
      schedule,
      policy,
      receiver: { ...DEFAULT_RECEIVER_POLICY, disableOnGone: options.disableOnGone ?? false },
      ...(operator ? { notices: operator.rules } : {}),
    },
    operator,
    deliveryThread,
    timeoutMs,
    leaseMs,
    renewEveryMs: Math.floor(leaseMs / 3),
    ...slotsOf(options),
    batchSize: positiveInt('batchSize', options.batchSize, 32),
    pollIntervalMs: positiveInt('pollIntervalMs', options.pollIntervalMs, 1000),
    retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
    quotas: checkQuotas(options.quotas),
  };
}
