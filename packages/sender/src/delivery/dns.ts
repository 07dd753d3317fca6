import { lookup } from 'node:dns';
import { isIP } from 'node:net';
import type { LookupFunction } from './address-guard.js';

/** Every address a host resolves to (an IP literal resolves to itself). */
export function dnsLookup(host: string, resolve?: LookupFunction): Promise<string[]> {
  if (isIP(host)) return Promise.resolve([host]);
  const fn = resolve ?? (lookup as unknown as LookupFunction);
  return new Promise((ok, fail) => {
    fn(host, { all: true }, (error, addresses) => {
      if (error) return fail(error);
      ok(Array.isArray(addresses) ? addresses.map((a) => a.address) : [addresses]);
    });
  });
}
