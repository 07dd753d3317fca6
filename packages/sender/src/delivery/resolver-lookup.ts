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
 * the system's resolver would. A name the DNS says does not exist cannot be a receiver on the public
 * internet; where private networks are allowed (development), it is then asked of the system's
 * resolver (`fallback`: search domains, mDNS, container names).
 */
import { type LookupAddress, promises, lookup as systemLookup } from 'node:dns';
import { readFile, stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { LookupFunction } from './address-guard.js';
import { createBoundedLookup, LOOKUP_TIMEOUT_MS } from './bounded-lookup.js';

export interface ResolverLookupOptions {
  /** Each lookup's deadline, DNS and fallback together. Default 5 s. */
  timeoutMs?: number;
  /** Name servers (`host:port`) in place of the system's, for tests. */
  servers?: string[];
  /** The hosts file. Default `/etc/hosts`. */
  hostsFile?: string;
  /** Asked when the DNS says a name does not exist (systemFallback); none by default. */
  fallback?: LookupFunction;
}

/** The system's resolver, two lookups at a time: the fallback where private networks are allowed. */
export const systemFallback = (timeoutMs = LOOKUP_TIMEOUT_MS): LookupFunction =>
  createBoundedLookup(systemLookup as unknown as LookupFunction, { timeoutMs });

/** The DNS's answers that a name has no address (of that family), not that it could not be asked. */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA']);

/** How long the hosts file is taken as read before its modification time is looked at again. */
const HOSTS_RECHECK_MS = 5_000;

/** Once one family has answered, how long the other is waited for. */
const OTHER_FAMILY_GRACE_MS = 250;

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

/**
 * The addresses of one family, or the error: a name server's refusal, failure or silence is a
 * failed look-up (`EAI_AGAIN`, a `dns` failure, as the system's resolver words it), never a
 * connection's (c-ares words an unreachable name server ECONNREFUSED).
 */
const asked = (query: Promise<string[]>, family: 4 | 6, hostname: string) =>
  query.then(
    (addresses) => addresses.map((address) => ({ address, family })),
    (error: NodeJS.ErrnoException) => {
      const kept = ABSENT.has(error.code ?? '') || error.code === 'ETIMEOUT'; // both dns failures already
      throw kept ? error : errorWithCode('EAI_AGAIN', `getaddrinfo EAI_AGAIN ${hostname}`);
    },
  );

/**
 * Both families' answers, IPv4 first; once one has addresses, the other gets OTHER_FAMILY_GRACE_MS
 * more (a name server that drops AAAA questions left names with an A record unresolved).
 */
function bothFamilies(v4: Promise<LookupAddress[]>, v6: Promise<LookupAddress[]>): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const got: (LookupAddress[] | NodeJS.ErrnoException | undefined)[] = [undefined, undefined];
    let grace: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      clearTimeout(grace);
      const found = got.flatMap((g) => (Array.isArray(g) ? g : []));
      if (found.length > 0) return resolve(found);
      const errors = got.filter((g): g is NodeJS.ErrnoException => g instanceof Error);
      reject(errors.find((e) => !ABSENT.has(e.code ?? '')) ?? errors[0]);
    };
    const settle = (i: number, value: LookupAddress[] | NodeJS.ErrnoException) => {
      got[i] = value;
      if (got.every((g) => g !== undefined)) return finish();
      if (Array.isArray(value) && value.length > 0) grace ??= setTimeout(finish, OTHER_FAMILY_GRACE_MS);
    };
    for (const [i, query] of [v4, v6].entries()) {
      query.then(
        (a) => settle(i, a),
        (e) => settle(i, e),
      );
    }
  });
}

/** The family a lookup asks for: 0 for both. */
const familyOf = (family: unknown): number =>
  family === 'IPv4' ? 4 : family === 'IPv6' ? 6 : Number(family ?? 0);

const notFound = (hostname: string) => errorWithCode('ENOTFOUND', `getaddrinfo ENOTFOUND ${hostname}`);

export function createResolverLookup(options: ResolverLookupOptions = {}): LookupFunction {
  const timeoutMs = options.timeoutMs ?? LOOKUP_TIMEOUT_MS;
  // c-ares retries each server on its own deadline; the lookup's own deadline is below.
  const resolver = new promises.Resolver({ timeout: Math.max(250, Math.floor(timeoutMs / 3)), tries: 2 });
  if (options.servers) resolver.setServers(options.servers);
  const fromHosts = hostsReader(options.hostsFile ?? '/etc/hosts');
  const { fallback } = options;

  const askFallback = (hostname: string, family: number) =>
    new Promise<LookupAddress[]>((resolve, reject) =>
      fallback!(hostname, { all: true, family }, (error, addresses) => {
        if (error) reject(error);
        else
          resolve(Array.isArray(addresses) ? addresses : [{ address: addresses, family: isIP(addresses) }]);
      }),
    );

  /** Every address of `hostname` of `family` (0: both), IPv4 first; never none. */
  async function addressesOf(hostname: string, family: number, started: number): Promise<LookupAddress[]> {
    if (isIP(hostname) !== 0) return [{ address: hostname, family: isIP(hostname) }];
    const listed = (await fromHosts(hostname.replace(/\.$/, '')))?.filter(
      (a) => family === 0 || a.family === family,
    );
    if (listed && listed.length > 0) return listed;
    const v4 = () => asked(resolver.resolve4(hostname), 4, hostname);
    const v6 = () => asked(resolver.resolve6(hostname), 6, hostname);
    let found: LookupAddress[];
    try {
      found = await (family === 4 ? v4() : family === 6 ? v6() : bothFamilies(v4(), v6()));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      // Not once the caller has given up: a fallback slot then serves no one. Measured from the
      // lookup's start, which is the bounded lookup's own while no lookup waits in its queue
      // (concurrency unbounded, below). "No such name" is put in the system's words by lookupOnce.
      if (!ABSENT.has(code) || !fallback || performance.now() - started >= timeoutMs) throw error;
      found = await askFallback(hostname, family);
    }
    if (found.length === 0) throw notFound(hostname);
    return found;
  }

  const lookupOnce: LookupFunction = (hostname, lookupOptions, callback) => {
    addressesOf(hostname, familyOf(lookupOptions.family), performance.now()).then(
      (addresses) =>
        lookupOptions.all
          ? callback(null, addresses)
          : callback(null, addresses[0]!.address, addresses[0]!.family),
      // The DNS's "no such name" in the system resolver's words, which the failure kinds know.
      (error: NodeJS.ErrnoException) =>
        callback(ABSENT.has(error.code ?? '') ? notFound(hostname) : error, lookupOptions.all ? [] : '', 4),
    );
  };
  // No thread is held, so every lookup may wait at once; the bounded lookup gives each its deadline.
  return createBoundedLookup(lookupOnce, { timeoutMs, concurrency: Number.POSITIVE_INFINITY });
}
