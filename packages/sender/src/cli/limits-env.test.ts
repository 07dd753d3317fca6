import { describe, expect, it } from 'vitest';
import { apiLimitsOf, quotasOf, workerLimitsOf, workerSlotsOf } from './limits-env.js';

describe('limits from the environment', () => {
  it('reads the worker’s slots, each variable its own, unset ones left to the engine', () => {
    expect(
      workerLimitsOf({
        LINKHOOKS_CONCURRENCY: '128',
        LINKHOOKS_PER_ENDPOINT_CAP: '4',
        LINKHOOKS_PER_ACCOUNT_CAP: '100',
        LINKHOOKS_PER_ORIGIN_CAP: '',
      }),
    ).toEqual({ concurrency: 128, perEndpointCap: 4, perAccountCap: 100 });
    expect(workerLimitsOf({ LINKHOOKS_PER_ORIGIN_CAP: '100000' })).toEqual({ perOriginCap: 100_000 });
    expect(workerLimitsOf({ LINKHOOKS_PER_ACCOUNT_AT_ORIGIN_CAP: '12' })).toEqual({
      perAccountAtOriginCap: 12,
    });
    expect(workerLimitsOf({})).toEqual({});
  });

  it("leaves the others a reserve of an origin's share: one account's there is all of it but min(8, a quarter)", () => {
    const atOrigin = (env: Record<string, string>) => workerSlotsOf(env).perAccountAtOriginCap;
    expect(atOrigin({})).toBe(48);
    expect(atOrigin({ LINKHOOKS_PER_ORIGIN_CAP: '16' })).toBe(12);
    expect(atOrigin({ LINKHOOKS_PER_ORIGIN_CAP: '1000' })).toBe(992);
    expect(atOrigin({ LINKHOOKS_PER_ORIGIN_CAP: '1' })).toBe(1);
    expect(atOrigin({ LINKHOOKS_PER_ACCOUNT_AT_ORIGIN_CAP: '56' })).toBe(56);
  });

  it('refuses what is not a whole number above 0, naming the variable', () => {
    for (const raw of ['0', '-1', '1.5', 'lots', ' 8']) {
      expect(() => workerLimitsOf({ LINKHOOKS_PER_ACCOUNT_CAP: raw })).toThrow(
        'LINKHOOKS_PER_ACCOUNT_CAP must be a whole number above 0',
      );
    }
    expect(() => workerLimitsOf({ LINKHOOKS_CONCURRENCY: '100001' })).toThrow(
      'LINKHOOKS_CONCURRENCY must be a whole number from 1 to 100000',
    );
    expect(() => quotasOf({ LINKHOOKS_EVENTS_BURST: 'many' })).toThrow('LINKHOOKS_EVENTS_BURST');
    expect(() => apiLimitsOf({ LINKHOOKS_API_REQUESTS_PER_MINUTE: '0' })).toThrow(
      'LINKHOOKS_API_REQUESTS_PER_MINUTE',
    );
  });
});
