/** An endpoint's URL and events as a customer sends them, checked before anything is stored. */
import { EVENT_NAMES, type EventName, isEventName } from '@linkhooks/protocol';
import {
  type AddressPolicy,
  checkAddress,
  checkUrl,
  type LookupFunction,
  opensForPrivateNetworks,
} from '../delivery/address-guard.js';
import { dnsLookup } from '../delivery/dns.js';
import { SenderError } from '../errors.js';

/**
 * HTTPS only, and not to a private or otherwise blocked address (design R2, D17). The address is
 * checked again at every connection (DNS rebinding); this early check gives a clear error now.
 */
export async function checkEndpointUrl(
  url: unknown,
  policy: AddressPolicy,
  resolve?: LookupFunction,
): Promise<string> {
  if (typeof url !== 'string') throw new SenderError('invalid_endpoint', 'url must be a string');
  const checked = checkUrl(url, policy);
  if (!checked.ok) {
    const ranges = checked.range === undefined ? [] : [checked.range];
    throw new SenderError('unsafe_url', `url is not allowed: ${checked.reason}${hintFor(ranges)}`);
  }
  // A fragment never leaves the client: a receiver told apart by one would get another's events.
  if (checked.url.hash !== '') {
    throw new SenderError(
      'invalid_endpoint',
      `url must not have a #fragment: it is never sent to the receiver (${checked.url.hash})`,
    );
  }
  const host = checked.url.hostname.replace(/^\[|\]$/g, '');
  // Checked again at every connection (DNS rebinding); this early check gives a clear error now.
  const addresses = await dnsLookup(host, resolve).catch((cause: NodeJS.ErrnoException) => {
    const problem =
      cause?.code === 'ETIMEOUT' ? 'could not be looked up in time; try again' : 'does not resolve';
    throw new SenderError('invalid_endpoint', `url host ${host} ${problem}`, { cause });
  });
  const refused = addresses.flatMap((address) => {
    const verdict = checkAddress(address, policy);
    return verdict.allowed ? [] : [verdict.reason];
  });
  if (refused.length > 0) {
    // Never the address itself: a customer could map the platform's network by probing names. The
    // hint says no more than that the flag lifts every refusal here, and only when it does.
    throw new SenderError(
      'unsafe_url',
      `url host ${host} resolves to an address that is not on the public internet, which is not allowed${hintFor(refused)}`,
    );
  }
  return checked.url.toString();
}

/**
 * A developer's receiver on their own machine or network is refused like any private address; the
 * message says how a service run for development lets it through (design D17), when the flag would
 * lift every refusal in `reasons` (checkAddress's).
 */
function hintFor(reasons: readonly string[]): string {
  return reasons.length > 0 && reasons.every(opensForPrivateNetworks)
    ? '. This service does not deliver to private networks (a service run for development allows them with --allow-private-networks)'
    : '';
}

export function checkEvents(events: unknown): EventName[] {
  if (!Array.isArray(events) || events.length === 0) {
    throw new SenderError(
      'invalid_endpoint',
      `events must be a non-empty array of: ${EVENT_NAMES.join(', ')}`,
    );
  }
  const unknown = events.filter((e) => !isEventName(e));
  if (unknown.length > 0) {
    throw new SenderError('invalid_endpoint', `unknown events: ${unknown.join(', ')}`, {
      details: { known: EVENT_NAMES },
    });
  }
  return [...new Set(events as EventName[])];
}
