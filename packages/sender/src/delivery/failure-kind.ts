/**
 * Classifies a failed HTTP attempt into a failure kind (design D4). Pure: it reads
 * the error's `code` and those of its `cause` chain, as undici and Node report them.
 */
import type { FailureKind } from '../domain/delivery-state.js';
import { notOnPublicInternet } from './address-guard.js';

// ETIMEOUT: a lookup past its deadline (bounded-lookup.ts), as c-ares names it.
const DNS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NODATA', 'EAI_FAIL', 'EAI_NONAME', 'ETIMEOUT']);
const TIMEOUT = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);
const TOO_LARGE = new Set([
  'UND_ERR_HEADERS_OVERFLOW',
  'UND_ERR_RES_EXCEEDED_MAX_SIZE',
  'HPE_HEADER_OVERFLOW',
]);
// OpenSSL's certificate verification codes, as Node surfaces them.
const TLS = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
  'EPROTO',
]);

// The guarded lookup's refusal (BlockedAddressError), and a name that does not exist in the words
// of the system's resolver (resolver-lookup.ts answers so).
const BLOCKED = 'LINKHOOKS_BLOCKED_ADDRESS';
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'EAI_NONAME', 'EAI_NODATA']);

type ErrorLink = { code?: unknown; message?: unknown; reason?: unknown; cause?: unknown };

/** `error` and the errors of its `cause` chain, `depth` at most. */
function chainOf(error: unknown, depth: number): ErrorLink[] {
  const links: ErrorLink[] = [];
  for (let current = error; current && links.length < depth; current = (current as ErrorLink).cause) {
    links.push(current as ErrorLink);
  }
  return links;
}

const codesOf = (links: ErrorLink[]): string[] =>
  links.flatMap(({ code }) => (typeof code === 'string' ? [code] : []));

/** The failure kind of an error an attempt ended with (its own deadline answers `timeout` itself). */
export const classifyError = (error: unknown): FailureKind => kindOf(chainOf(error, 8));

/** classifyError's decision, on the error's cause chain (chainOf). */
function kindOf(links: ErrorLink[]): FailureKind {
  const all = codesOf(links);
  // A refused address is a name without a public address (design D17; attemptFailure's words).
  if (all.includes(BLOCKED) || all.some((c) => DNS.has(c))) return 'dns';
  if (all.some((c) => TIMEOUT.has(c))) return 'timeout';
  if (all.some((c) => TOO_LARGE.has(c))) return 'response_too_large';
  if (all.some((c) => TLS.has(c) || c.startsWith('ERR_TLS_') || c.startsWith('ERR_SSL_'))) return 'tls';
  return 'connect';
}

/**
 * The kind and the log's message of an error an attempt to `host` ended with. A name that does not
 * exist and one whose address the guarded lookup refused are one failure in the same words
 * (notOnPublicInternet): the delivery log must not tell a customer which of the platform's internal
 * names exist, nor does its time (`noPublicAddress`: recorded as taking none). `refused`, for the
 * operator's log, says why an address was refused.
 */
export function attemptFailure(
  error: unknown,
  host: string,
): { kind: FailureKind; message: string; refused?: string; noPublicAddress?: true } {
  const links = chainOf(error, 8);
  const kind = kindOf(links);
  const refused = links.find(({ code }) => code === BLOCKED)?.reason;
  // No development hint here: the endpoint was made, so its host was allowed then, and the hint
  // would tell a name of the machine's own from one that does not exist.
  const noPublic = () => ({ kind, message: notOnPublicInternet(host), noPublicAddress: true }) as const;
  if (typeof refused === 'string') return { ...noPublic(), refused };
  if (links.some(({ code }) => NO_SUCH_NAME.has(code as string))) return noPublic();
  return { kind, message: describeError(error) };
}

/** A short, secret-free description of an error for the delivery log. */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  for (const e of chainOf(error, 4)) {
    const text = [typeof e.code === 'string' ? e.code : '', typeof e.message === 'string' ? e.message : '']
      .filter(Boolean)
      .join(': ');
    if (text && !parts.includes(text)) parts.push(text);
  }
  return withoutAddresses(parts.join(' ← ') || String(error)).slice(0, 500);
}

// Node's messages name the address a connection went to ("connect ECONNREFUSED 10.1.2.3:443"):
// the delivery log is the customer's, and the platform's addresses are not theirs to see.
const IPV4 = /\b(?:\d{1,3}\.){3}\d{1,3}\b/g;
// A run of hex digits and colons with "::" or at least four colons (a time such as 12:30:45 has
// two); Node writes an IPv6 address and its port the same way ("::1:443").
const HEX_AND_COLONS = /(?<![\w.:])[0-9a-f:]{3,}(?:%\w+)?(?![\w:])/gi;
const isIPv6Like = (token: string) => token.includes('::') || token.split(':').length > 4;

/** `text` with every IP address replaced by "an address". */
export function withoutAddresses(text: string): string {
  return text
    .replace(IPV4, 'an address')
    .replace(HEX_AND_COLONS, (token) => (isIPv6Like(token) ? 'an address' : token));
}
