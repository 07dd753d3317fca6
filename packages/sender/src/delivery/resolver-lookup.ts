/**
 * Name resolution that no customer's names can hold up for another's. `dns.lookup` runs on libuv's
 * thread pool (four threads for the whole process, file and crypto work included), and a name whose
 * name server never answers holds its thread for as long as the system's resolver waits (10 s and
 * more): a tenant's endpoints with such names, at a couple of lookups at a time, kept every other
 * tenant's connections from being looked up, and their attempts failed as `dns` (seen: a
 * `localhost` receiver's test delivery failed after 5 s while another tenant created endpoints).
 *
 * Here names are asked of the DNS directly (c-ares, Node's `dns.Resolver`): no thread is held, any
 * number of lookups wait at once, and each has its own deadline. The hosts file answers first, as
 * the system's resolver would; a name the DNS says does not exist is then asked of the system's
 * resolver (`fallback`, bounded: search domains, mDNS, container names), which answers such names
 * at once in the common case.
 */
import { type LookupAddress, promises, lookup as systemLookup } from 'node:dns';
import { readFile, stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { LookupFunction } from './address-guard.js';
import { createBoundedLookup, LOOKUP_TIMEOUT_MS, LookupTimeoutError } from './bounded-lookup.js';

export interface ResolverLookupOptions {
  /** Each lookup's deadline, DNS and fallback together. Default 5 s. */
  timeoutMs?: number;
  /** Name servers (`host:port`) in place of the system's, for tests. */
  servers?: string[];
  /** The hosts file. Default `/etc/hosts`. */
  hostsFile?: string;
  /** Asked when the DNS says a name does not exist. Default: `dns.lookup`, two at a time. */
  fallback?: LookupFunction;
}

/** The DNS's answers that a name has no address (of that family), not that it could not be asked. */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA']);

/** How long the hosts file is taken as read before its modification time is looked at again. */
const HOSTS_RECHECK_MS = 5_000;

/** name → its addresses, from a hosts file's text (names are case-insensitive). */
export function parseHosts(text: string): Map<string, LookupAddress[]> {
  const hosts = new Map<string, LookupAddress[]>();
  for (const line of text.split('\n')) {
    const [address, ...names] = (line.split('#')[0] ?? '').trim().split(/\s+/);
    const family = address ? isIP(address) : 0;
    if (family === 0) continue;
    for (const name of names) {
      const key = name.toLowerCase();
      hosts.set(key, [...(hosts.get(key) ?? []), { address: address!, family }]);
    }
  }
  return hosts;
}

function hostsReader(file: string) {
  let entries = new Map<string, LookupAddress[]>();
  let modified = -1;
  let checkedAt = -Infinity;
  let reading: Promise<void> | null = null;
  const refresh = async () => {
    const mtime = await stat(file).then(
      (s) => s.mtimeMs,
      () => 0,
    );
    if (mtime !== modified) {
      entries = mtime === 0 ? new Map() : parseHosts(await readFile(file, 'utf8').catch(() => ''));
      modified = mtime;
    }
    checkedAt = performance.now();
  };
  return async (name: string): Promise<LookupAddress[] | undefined> => {
    if (performance.now() - checkedAt >= HOSTS_RECHECK_MS) {
      reading ??= refresh().finally(() => {
        reading = null;
      });
      await reading;
    }
    return entries.get(name.toLowerCase());
  };
}

const errorWithCode = (code: string, message: string) =>
  Object.assign(new Error(message), { code }) as NodeJS.ErrnoException;

export function createResolverLookup(options: ResolverLookupOptions = {}): LookupFunction {
  const timeoutMs = options.timeoutMs ?? LOOKUP_TIMEOUT_MS;
  // c-ares retries each server on its own deadline; the lookup's own deadline is below.
  const resolver = new promises.Resolver({ timeout: Math.max(250, Math.floor(timeoutMs / 2)), tries: 2 });
  if (options.servers) resolver.setServers(options.servers);
  const fromHosts = hostsReader(options.hostsFile ?? '/etc/hosts');
  const fallback =
    options.fallback ?? createBoundedLookup(systemLookup as unknown as LookupFunction, { timeoutMs });

  const askFallback = (hostname: string, family: number) =>
    new Promise<LookupAddress[]>((resolve, reject) =>
      fallback(hostname, { all: true, family }, (error, addresses) => {
        if (error) reject(error);
        else
          resolve(Array.isArray(addresses) ? addresses : [{ address: addresses, family: isIP(addresses) }]);
      }),
    );

  /** Every address of `hostname` of `family` (0: both), IPv4 first. */
  async function addressesOf(hostname: string, family: number): Promise<LookupAddress[]> {
    if (isIP(hostname) !== 0) return [{ address: hostname, family: isIP(hostname) }];
    const listed = (await fromHosts(hostname))?.filter((a) => family === 0 || a.family === family);
    if (listed && listed.length > 0) return listed;
    const asked = await Promise.allSettled([
      family === 6 ? Promise.resolve([]) : resolver.resolve4(hostname),
      family === 4 ? Promise.resolve([]) : resolver.resolve6(hostname),
    ]);
    const found = asked.flatMap((a, i) =>
      a.status === 'fulfilled' ? a.value.map((address) => ({ address, family: i === 0 ? 4 : 6 })) : [],
    );
    if (found.length > 0) return found;
    const failed = asked.flatMap((a) => (a.status === 'rejected' ? [a.reason as NodeJS.ErrnoException] : []));
    const unasked = failed.find((e) => !ABSENT.has(e.code ?? ''));
    if (unasked) throw unasked;
    return askFallback(hostname, family);
  }

  return (hostname, lookupOptions, callback) => {
    const family =
      lookupOptions.family === 'IPv4'
        ? 4
        : lookupOptions.family === 'IPv6'
          ? 6
          : Number(lookupOptions.family ?? 0);
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      callback(
        new LookupTimeoutError(hostname, timeoutMs) as NodeJS.ErrnoException,
        lookupOptions.all ? [] : '',
        4,
      );
    }, timeoutMs);
    addressesOf(hostname, family).then(
      (addresses) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (addresses.length === 0) {
          return callback(
            errorWithCode('ENOTFOUND', `getaddrinfo ENOTFOUND ${hostname}`),
            lookupOptions.all ? [] : '',
            4,
          );
        }
        if (lookupOptions.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        callback(error, lookupOptions.all ? [] : '', 4);
      },
    );
  };
}
