/**
 * Classifies a failed HTTP attempt into a failure kind (design D4). Pure: it reads
 * the error's `code` and those of its `cause` chain, as undici and Node report them.
 */
import type { FailureKind } from '../domain/delivery-state.js';

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

function codes(error: unknown): string[] {
  const out: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 8; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') out.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return out;
}

/** The failure kind of an error thrown by an attempt. `timedOut` is set when our own deadline fired. */
export function classifyError(error: unknown, timedOut: boolean): FailureKind {
  if (timedOut) return 'timeout';
  const all = codes(error);
  if (all.includes('LINKHOOKS_BLOCKED_ADDRESS')) return 'blocked_address';
  if (all.some((c) => DNS.has(c))) return 'dns';
  if (all.some((c) => TIMEOUT.has(c))) return 'timeout';
  if (all.some((c) => TOO_LARGE.has(c))) return 'response_too_large';
  if (all.some((c) => TLS.has(c) || c.startsWith('ERR_TLS_') || c.startsWith('ERR_SSL_'))) return 'tls';
  return 'connect';
}

/** A short, secret-free description of an error for the delivery log. */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const e = current as { code?: unknown; message?: unknown };
    const text = [typeof e.code === 'string' ? e.code : '', typeof e.message === 'string' ? e.message : '']
      .filter(Boolean)
      .join(': ');
    if (text && !parts.includes(text)) parts.push(text);
    current = (current as { cause?: unknown }).cause;
  }
  return (parts.join(' ← ') || String(error)).slice(0, 500);
}
