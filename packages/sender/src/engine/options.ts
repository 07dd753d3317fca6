/**
 * The engine's options, checked once at start-up: a bad setting fails loudly with a clear error
 * rather than retrying oddly later.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { LookupFunction } from '../delivery/address-guard.js';
import type { DeliveryClient } from '../delivery/http-client.js';
import { DEFAULT_DISABLE_POLICY, type DisablePolicy } from '../domain/disable-rule.js';
import { ATTEMPT_TIMEOUT_MS, assertSchedule, RETRY_DELAYS_MS } from '../domain/schedule.js';
import type { TransitionRules } from '../domain/transition.js';
import { SenderError } from '../errors.js';
import type { SenderStore } from '../store/port.js';
import type { EndpointRecord } from '../store/records.js';
import type { AttemptReport } from '../worker/attempt.js';

export interface SenderOptions {
  store: SenderStore;
  clock?: Clock;
  /** Retry delays in ms (design R12 by default). */
  retryDelaysMs?: readonly number[];
  /** Multiplies the retry delays: 0.001 runs the whole schedule in ~38 s (demos, checks). */
  timeScale?: number;
  /** Default: 10 failed deliveries in a row (design D1). */
  disablePolicy?: Partial<DisablePolicy>;
  /** Whole-attempt deadline. Default 30 s (design R11). */
  attemptTimeoutMs?: number;
  /** Claim lease; must be longer than the attempt deadline. Default deadline + 30 s. */
  leaseMs?: number;
  concurrency?: number;
  perEndpointCap?: number;
  batchSize?: number;
  pollIntervalMs?: number;
  /** Development only: deliver to loopback and private networks. Never plain HTTP. */
  allowPrivateNetworks?: boolean;
  /** Extra CA certificates to trust (a test CA). */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Name resolution, for tests. */
  resolve?: LookupFunction;
  /** Replace the HTTP client (tests). */
  client?: DeliveryClient;
  /** Told when an endpoint is disabled automatically. */
  onEndpointDisabled?: (endpoint: EndpointRecord) => void | Promise<void>;
  /** Told of every recorded attempt. */
  onAttempt?: (report: AttemptReport) => void;
  logger?: Logger;
  /** How long final deliveries stay in the log. Default 30 days. */
  retentionMs?: number;
  /**
   * Encrypts endpoint secrets at rest (AES-256-GCM): 32 bytes as hex or base64, e.g. the
   * service's LINKHOOKS_MASTER_KEY. Without it, secrets are stored as they are, and a store holding
   * encrypted ones refuses to hand them out rather than sign with ciphertext.
   */
  masterKey?: string;
}

export interface Settings {
  rules: TransitionRules;
  timeoutMs: number;
  leaseMs: number;
  concurrency: number;
  perEndpointCap: number;
  batchSize: number;
  pollIntervalMs: number;
  retentionMs: number;
}

const DEFAULT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1)
    throw new SenderError('invalid_option', `${name} must be a positive integer`);
  return v;
}

export function settingsOf(options: SenderOptions): Settings {
  const schedule = { delaysMs: options.retryDelaysMs ?? RETRY_DELAYS_MS, timeScale: options.timeScale ?? 1 };
  assertSchedule(schedule);
  const timeoutMs = positiveInt('attemptTimeoutMs', options.attemptTimeoutMs, ATTEMPT_TIMEOUT_MS);
  const leaseMs = positiveInt('leaseMs', options.leaseMs, timeoutMs + 30_000);
  if (leaseMs <= timeoutMs) {
    // A lease shorter than the attempt lets a second worker send while the first still waits (design I3).
    throw new SenderError(
      'invalid_option',
      'leaseMs must be longer than attemptTimeoutMs, or a second worker could send while the first still waits',
    );
  }
  return {
    rules: { schedule, policy: { ...DEFAULT_DISABLE_POLICY, ...options.disablePolicy } },
    timeoutMs,
    leaseMs,
    concurrency: positiveInt('concurrency', options.concurrency, 64),
    perEndpointCap: positiveInt('perEndpointCap', options.perEndpointCap, 8),
    batchSize: positiveInt('batchSize', options.batchSize, 32),
    pollIntervalMs: positiveInt('pollIntervalMs', options.pollIntervalMs, 1000),
    retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
  };
}
