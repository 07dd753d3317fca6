/**
 * The service's own origin settings, checked strictly at start: the origins that may frame the
 * dashboard (design D55) and the public URL its links use (design D54). A value is an origin as a
 * browser writes it — scheme, host and port, nothing more — so it can go into a header or a link
 * as it is.
 */
import { SenderError } from '../errors.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** `value` as an origin, or why it is not one; `https` only, but for `http` on a loopback host. */
function originOf(value: string, what: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {}
  const shape = `${what} must be an origin such as https://app.example.com (scheme, host and optional port; no path)`;
  // The URL parser lets `*` and `;` into a host name: a host is letters, digits, dots and hyphens
  // (or an IPv6 literal), so nothing can widen or end the header it goes into.
  const host = url?.hostname ?? '';
  const plainHost = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(host) || /^\[[0-9a-f:.]+\]$/.test(host);
  if (!url || !plainHost || url.origin === 'null' || `${url.origin}/` !== url.href) {
    throw new SenderError('invalid_option', `${shape}; "${value}" is not`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    throw new SenderError(
      'invalid_option',
      `${what} must use https (http only for localhost, for development); "${value}" does not`,
    );
  }
  // Written as the browser writes it (lowercase, default port left out): what the header compares.
  if (value.replace(/\/$/, '') !== url.origin) {
    throw new SenderError('invalid_option', `${what}: write "${value}" as ${url.origin}`);
  }
  return url.origin;
}

/**
 * The origins that may frame the dashboard, as given (a list, or one string separated by spaces or
 * commas); no wildcards. Empty: no other site may frame it.
 *
 * @example
 * frameAncestorsOf('https://app.example.com https://admin.example.com');
 */
export function frameAncestorsOf(value: string | readonly string[] | undefined): string[] {
  const items = typeof value === 'string' ? value.split(/[\s,]+/) : (value ?? []);
  const origins = items.filter((item) => item !== '').map((item) => originOf(item, 'a frame ancestor'));
  return [...new Set(origins)];
}

/**
 * The public URL of the service, where a browser reaches it behind a proxy: an `https` origin (a
 * path prefix is not supported: the dashboard lives at /dashboard).
 *
 * @example
 * publicUrlOf('https://hooks.example.com'); // 'https://hooks.example.com'
 */
export function publicUrlOf(value: string): string {
  return originOf(value, 'the public URL');
}
