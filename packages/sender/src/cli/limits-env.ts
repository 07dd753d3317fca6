/** The service's quotas and API limits from its environment (design D26); unset means the default. */
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
export const SIGN_IN_VARIABLE = 'LINKHOOKS_SIGN_IN_FAILURES_PER_MINUTE';
export const API_REQUESTS_VARIABLE = 'LINKHOOKS_API_REQUESTS_PER_MINUTE';

function positive(name: string, raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1) {
    throw new SenderError('invalid_option', `${name} must be a whole number above 0`);
  }
  return Number(raw);
}

export function quotasOf(env: Env): Partial<Quotas> {
  const quotas: Partial<Quotas> = {};
  for (const [key, name] of Object.entries(QUOTA_VARIABLES) as [keyof Quotas, string][]) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') quotas[key] = positive(name, raw);
  }
  return quotas;
}

/** The API's own limits: failed sign-ins per client address, requests per account. */
export function apiLimitsOf(env: Env): { signInFailuresPerMinute?: number; apiRequestsPerMinute?: number } {
  const of = (name: string) => {
    const raw = env[name];
    return raw === undefined || raw === '' ? undefined : positive(name, raw);
  };
  const signIns = of(SIGN_IN_VARIABLE);
  const requests = of(API_REQUESTS_VARIABLE);
  return {
    ...(signIns === undefined ? {} : { signInFailuresPerMinute: signIns }),
    ...(requests === undefined ? {} : { apiRequestsPerMinute: requests }),
  };
}
