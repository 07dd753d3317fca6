/**
 * The service's quotas, API limits (design D26) and worker slots (design D25) from its environment;
 * unset means the default.
 */
import { type SlotOptions, slotsOf } from '../engine/options.js';
import type { Quotas } from '../engine/quotas.js';
import { SenderError } from '../errors.js';

type Env = Record<string, string | undefined>;

const QUOTA_VARIABLES: Record<keyof Quotas, string> = {
  endpointsPerAccount: 'LINKHOOKS_ENDPOINTS_PER_ACCOUNT',
  eventsPerSecond: 'LINKHOOKS_EVENTS_PER_SECOND',
  eventsBurst: 'LINKHOOKS_EVENTS_BURST',
  testSendsPerMinute: 'LINKHOOKS_TEST_SENDS_PER_MINUTE',
  retriesPerMinute: 'LINKHOOKS_RETRIES_PER_MINUTE',
  recoveriesPerMinute: 'LINKHOOKS_RECOVERIES_PER_MINUTE',
};
const API_LIMIT_VARIABLES = {
  signInFailuresPerMinute: 'LINKHOOKS_SIGN_IN_FAILURES_PER_MINUTE',
  apiRequestsPerMinute: 'LINKHOOKS_API_REQUESTS_PER_MINUTE',
} as const;

function positive(name: string, raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1) {
    throw new SenderError('invalid_option', `${name} must be a whole number above 0`);
  }
  return Number(raw);
}

/** The settings `variables` name that `env` sets, each a whole number above 0. */
function fromEnv<K extends string>(env: Env, variables: Record<K, string>): Partial<Record<K, number>> {
  const settings: Partial<Record<K, number>> = {};
  for (const [key, name] of Object.entries(variables) as [K, string][]) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') settings[key] = positive(name, raw);
  }
  return settings;
}

export const quotasOf = (env: Env): Partial<Quotas> => fromEnv(env, QUOTA_VARIABLES);

/** The API's own limits: failed sign-ins per client address, requests per account. */
export const apiLimitsOf = (env: Env) => fromEnv(env, API_LIMIT_VARIABLES);

const WORKER_VARIABLES: Record<keyof SlotOptions, string> = {
  concurrency: 'LINKHOOKS_CONCURRENCY',
  perEndpointCap: 'LINKHOOKS_PER_ENDPOINT_CAP',
  perAccountCap: 'LINKHOOKS_PER_ACCOUNT_CAP',
  perOriginCap: 'LINKHOOKS_PER_ORIGIN_CAP',
  perAccountAtOriginCap: 'LINKHOOKS_PER_ACCOUNT_AT_ORIGIN_CAP',
};
/** More slots than any process could hold open; a claim takes its counts as 32-bit integers. */
const MAX_SLOTS = 100_000;

/**
 * The worker's slots (design D25): requests open at once in this process, and the most one
 * endpoint (across every process), account, origin or account at an origin may hold of them; the
 * engine's defaults where unset.
 */
export function workerLimitsOf(env: Env): SlotOptions {
  const slots = fromEnv(env, WORKER_VARIABLES);
  for (const [key, value] of Object.entries(slots) as [keyof SlotOptions, number][]) {
    if (value > MAX_SLOTS) {
      throw new SenderError(
        'invalid_option',
        `${WORKER_VARIABLES[key]} must be a whole number from 1 to ${MAX_SLOTS}`,
      );
    }
  }
  return slots;
}

/** The slots the engine runs with for `env`: what it set, the defaults for the rest (the start log). */
export const workerSlotsOf = (env: Env): Required<SlotOptions> => slotsOf(workerLimitsOf(env));
