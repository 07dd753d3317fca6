/**
 * Network safety for deliveries (design D17). An endpoint URL is chosen by a
 * customer, so the sender must never be turned into a proxy into our own network: only HTTPS
 * (design R2), and only globally routable unicast addresses. The address is checked where the
 * connection is made — a custom `lookup` handed to undici — so a name that resolves to a public
 * address when the endpoint is created and to a private one at delivery time (DNS rebinding) is
 * refused on the address actually connected to.
 *
 * Classification is ipaddr.js's `range()`, with only `unicast` allowed. Two IPv6 corrections where
 * its answer is too permissive here: `parseIPv6` (the `::a.b.c.d` form) and `IPV6_GLOBAL_UNICAST`.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** What the sender may connect to. */
export interface AddressPolicy {
  /**
   * Development only (`--allow-private-networks`, design D17): also allow loopback,
   * RFC 1918, link-local, unique-local and CGNAT addresses. Unspecified, multicast, broadcast and
   * reserved addresses stay refused: no receiver can live there.
   */
  allowPrivateNetworks: boolean;
}

/**
 * Whether an address may be connected to. `reason` is ipaddr.js's range name (`loopback`,
 * `private`, `linkLocal`, `carrierGradeNat`, `unspecified`, `multicast`, `broadcast`, `reserved`,
 * `uniqueLocal`, `rfc6052`, `6to4`, `teredo`, …), `ipv4Mapped:<range>` for an IPv4-mapped IPv6
 * address, or `invalid` for a string that is not an IP address.
 */
export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** The signature of `dns.lookup` as `net.connect` calls it (and so undici's `connect.lookup`). */
export type LookupFunction = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

// Ranges `allowPrivateNetworks` opens, for a receiver on the developer's own machine or LAN.
const PRIVATE_RANGES: ReadonlySet<string> = new Set([
  'loopback',
  'private',
  'linkLocal',
  'uniqueLocal',
  'carrierGradeNat',
]);

// ipaddr.js calls every IPv6 address outside its special ranges 'unicast', including unassigned
// space such as ::7f00:1, 1:: or e000::. Everything IANA has allocated for global unicast lies in
// 2000::/3 (RFC 4291 2.4), so we require that too instead of trusting 'unicast' alone.
const IPV6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

const ALLOWED: AddressVerdict = { allowed: true };

/**
 * The plain words for a refusal's range, as a customer reads them in an answer or the delivery log.
 * Ranges without words of their own (IPv6 transition and protocol ranges: rfc6052, 6to4, teredo,
 * orchid2, …) are "reserved for a special purpose"; the range's name stays in `range` for machines.
 */
const RANGE_WORDS: Readonly<Record<string, string>> = {
  loopback: 'a loopback address',
  private: 'a private network address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a private (unique local) IPv6 address',
  carrierGradeNat: 'a carrier-grade NAT address',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
  metadata: "a cloud provider's metadata address",
  invalid: 'an address that cannot be read',
};

const MAPPED = 'ipv4Mapped:';
/** A refusal's range, for an IPv4-mapped IPv6 address its IPv4 address's. */
const rangeOf = (reason: string) => (reason.startsWith(MAPPED) ? reason.slice(MAPPED.length) : reason);

/** How a refusal's `reason` (checkAddress) reads in a sentence: "is <words>". */
export function rangeInWords(reason: string): string {
  const words = RANGE_WORDS[rangeOf(reason)] ?? 'reserved for a special purpose';
  return reason.startsWith(MAPPED)
    ? `an IPv4 address in IPv6 form, and that IPv4 address is ${words}`
    : words;
}

/** Whether a refusal's `reason` names a range `allowPrivateNetworks` opens (a receiver in development). */
export function opensForPrivateNetworks(reason: string): boolean {
  return PRIVATE_RANGES.has(rangeOf(reason));
}

/**
 * A developer's receiver on their own machine or network is refused like any private address; the
 * message says how a service run for development lets it through, when the flag would lift every
 * refusal in `reasons` (checkAddress's).
 */
export function privateNetworkHint(reasons: readonly string[]): string {
  return reasons.length > 0 && reasons.every(opensForPrivateNetworks)
    ? '. This service does not deliver to private networks (a service run for development allows them with --allow-private-networks)'
    : '';
}

/**
 * What a customer reads of a host whose name gives no address to deliver to: one that does not
 * exist and one whose addresses are refused (`refused`, checkAddress's reasons) in the same words,
 * when an endpoint is made and in its delivery log alike. Told apart, a customer could point a name
 * of their own at the platform's internal names and learn which exist. Never the address; the
 * development hint only for a name of the machine's own (loopback), which every machine has.
 */
export function notOnPublicInternet(host: string, refused: readonly string[] = []): string {
  const own = refused.length > 0 && refused.every((reason) => rangeOf(reason) === 'loopback');
  return `${host} does not resolve to an address on the public internet${own ? privateNetworkHint(refused) : ''}`;
}

// Cloud metadata services answer on these, handing out the machine's credentials: refused even
// with `allowPrivateNetworks`, which opens link-local and private ranges for development
// (AWS, GCP and Azure's 169.254.169.254 and AWS's IPv6 fd00:ec2::254, the ECS task endpoint, EKS
// Pod Identity's agent on IPv4 and IPv6, AWS's DNS resolver, Alibaba's 100.100.100.200, Oracle
// Cloud's IPv6 metadata address).
const METADATA_ADDRESSES: ReadonlySet<string> = new Set(
  [
    '169.254.169.254',
    '169.254.170.2',
    '169.254.170.23',
    'fd00:ec2::23',
    '169.254.169.253',
    '100.100.100.200',
    'fd00:ec2::254',
    'fd00:c1::a9fe:a9fe',
  ].map((ip) => ipaddr.parse(ip).toNormalizedString()),
);

function isMetadataAddress(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  const v4 = address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress();
  const plain = v4 ? (address as ipaddr.IPv6).toIPv4Address() : address;
  return METADATA_ADDRESSES.has(plain.toNormalizedString());
}

const METADATA: AddressVerdict = { allowed: false, reason: 'metadata' };

function verdictFor(range: string, policy: AddressPolicy, prefix = ''): AddressVerdict {
  if (range === 'unicast') return ALLOWED;
  if (policy.allowPrivateNetworks && PRIVATE_RANGES.has(range)) return ALLOWED;
  return { allowed: false, reason: prefix + range };
}

/**
 * Parses an IPv6 literal as the RFC reads it. ipaddr.js rewrites the deprecated IPv4-compatible
 * form `::a.b.c.d` to the IPv4-mapped `::ffff:a.b.c.d`, a different address; the WHATWG URL parser
 * does not, and serialises every IPv6 address in plain hex, which ipaddr.js then reads faithfully.
 */
function parseIPv6(ip: string): ipaddr.IPv6 | null {
  const bare = ip.split('%', 1)[0] ?? ''; // a zone id names an interface, not a different address
  try {
    const hostname = new URL(`https://[${bare}]/`).hostname;
    return ipaddr.IPv6.parse(hostname.slice(1, -1));
  } catch {
    return null;
  }
}

function classifyIPv6(address: ipaddr.IPv6, policy: AddressPolicy): AddressVerdict {
  // ::ffff:a.b.c.d is a.b.c.d on a dual-stack socket: judge the IPv4 address inside.
  if (address.isIPv4MappedAddress()) {
    return verdictFor(address.toIPv4Address().range(), policy, MAPPED);
  }
  // NAT64 (rfc6052), 6to4, Teredo, rfc6145 and the rest are refused whole, even when the IPv4
  // address they embed is public: conservative, and no webhook receiver needs them.
  const range = address.range();
  if (range === 'unicast' && !address.match(IPV6_GLOBAL_UNICAST)) {
    return { allowed: false, reason: 'reserved' };
  }
  return verdictFor(range, policy);
}

/**
 * Decides whether the sender may connect to `ip` (design D17). Only strict IP
 * literals are accepted (`net.isIP`): the lookup and the URL parser hand us canonical forms, so
 * anything else (`127.1`, `0x7f000001`, `010.0.0.1`) is refused as `invalid` rather than guessed at.
 *
 * @example
 * checkAddress('8.8.8.8', { allowPrivateNetworks: false });          // { allowed: true }
 * checkAddress('169.254.169.254', { allowPrivateNetworks: false });  // { allowed: false, reason: 'linkLocal' }
 * checkAddress('::ffff:127.0.0.1', { allowPrivateNetworks: false }); // { allowed: false, reason: 'ipv4Mapped:loopback' }
 * checkAddress('127.0.0.1', { allowPrivateNetworks: true });         // { allowed: true }
 */
export function checkAddress(ip: string, policy: AddressPolicy): AddressVerdict {
  const family = typeof ip === 'string' ? isIP(ip) : 0;
  if (family === 4) {
    const address = ipaddr.IPv4.parse(ip);
    return isMetadataAddress(address) ? METADATA : verdictFor(address.range(), policy);
  }
  if (family === 6) {
    const address = parseIPv6(ip);
    if (!address) return { allowed: false, reason: 'invalid' };
    return isMetadataAddress(address) ? METADATA : classifyIPv6(address, policy);
  }
  return { allowed: false, reason: 'invalid' };
}

/**
 * The error a guarded lookup fails with. Its `code` is what the delivery client's failure
 * classifier looks for in an error's `cause` chain (attemptFailure), whatever undici wraps it in,
 * to record the attempt as a name that does not exist is (design D4, D17).
 */
export class BlockedAddressError extends Error {
  override readonly name = 'BlockedAddressError';
  readonly code = 'LINKHOOKS_BLOCKED_ADDRESS';
  /** The resolved address that was refused. */
  readonly address: string;
  /** The name that resolved to it. */
  readonly hostname: string;
  /** The `AddressVerdict` reason, e.g. `loopback`. */
  readonly reason: string;

  constructor(details: { hostname: string; address: string; reason: string }) {
    const { hostname, address, reason } = details;
    // Never the address, whoever reads the message; the fields keep it for operators. The customer's
    // delivery log words a refusal as it words a name that does not exist (attemptFailure).
    super(notOnPublicInternet(hostname, [reason]));
    this.hostname = hostname;
    this.address = address;
    this.reason = reason;
  }
}

/**
 * Wraps a resolver so that every address it answers is checked before the socket connects
 * (design D17; the defence against DNS rebinding, since the address checked is the
 * one connected to). Pass it as undici's `connect: { lookup }`. With `options.all` (Node's
 * happy-eyeballs connect asks for every address) one refused address fails the whole lookup:
 * Node may try any of them. A refused address calls back with a `BlockedAddressError`.
 *
 * `net.connect` does not call `lookup` for an IP literal host, which is why `checkUrl` checks
 * those itself.
 *
 * @example
 * const agent = new Agent({ connect: { lookup: createGuardedLookup({ allowPrivateNetworks: false }) } });
 */
export function createGuardedLookup(
  policy: AddressPolicy,
  resolve: LookupFunction = dnsLookup as LookupFunction,
): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const answers = Array.isArray(address) ? address.map((a) => a.address) : [address];
      for (const answer of answers) {
        const verdict = checkAddress(answer, policy);
        if (!verdict.allowed) {
          return callback(
            new BlockedAddressError({ hostname, address: answer, reason: verdict.reason }),
            Array.isArray(address) ? [] : '',
          );
        }
      }
      callback(null, address, family);
    });
  };
}

/**
 * Checks an endpoint URL before anything is sent, when an endpoint is created and before each
 * delivery (design D17): `https:` only (design R2 — plain HTTP never, not even in
 * development), no `user:password@` (a secret in the URL would be stored and logged with it), a
 * non-empty host, and an IP-literal host checked here because `net.connect` skips `lookup` for
 * it. The WHATWG parser has already turned `2130706433`, `0x7f000001`, `0177.0.0.1` and `127.1`
 * into `127.0.0.1`; IPv6 hosts come bracketed. A host name is checked at connect time instead.
 *
 * @example
 * checkUrl('https://hooks.example.com/in', { allowPrivateNetworks: false }); // { ok: true, url }
 * checkUrl('http://hooks.example.com/in', { allowPrivateNetworks: false });  // { ok: false, reason: 'scheme http: …' }
 * checkUrl('https://0x7f000001/', { allowPrivateNetworks: false });          // { ok: false, reason: 'address 127.0.0.1 is a loopback address, …', range: 'loopback' }
 *
 * A refused IP host's `range` is checkAddress's reason for it (a range name, `metadata`, …).
 */
export function checkUrl(
  url: string,
  policy: AddressPolicy,
): { ok: true; url: URL } | { ok: false; reason: string; range?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'not an absolute URL' };
  }
  if (parsed.protocol !== 'https:') {
    return {
      ok: false,
      reason: `scheme ${parsed.protocol} is not allowed: the URL must use https`,
    };
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return { ok: false, reason: 'credentials in the URL (user:password@) are not allowed' };
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') return { ok: false, reason: 'the URL has no host' };
  if (isIP(host) !== 0) {
    const verdict = checkAddress(host, policy);
    if (!verdict.allowed) {
      return {
        ok: false,
        reason: `address ${host} is ${rangeInWords(verdict.reason)}, not one on the public internet`,
        range: verdict.reason,
      };
    }
  }
  return { ok: true, url: parsed };
}
