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
  // A name that does not exist and one that leads into a private network are refused in the same
  // words: told apart, a customer could learn which of the platform's internal names exist.
  const notPublic = `url host ${host} does not resolve to an address on the public internet`;
  const addresses = await dnsLookup(host, resolve).catch((cause: NodeJS.ErrnoException) => {
    // Also in the same code: the code is in the answer's body.
    if (cause?.code !== 'ETIMEOUT') throw new SenderError('unsafe_url', notPublic, { cause });
    throw new SenderError('invalid_endpoint', `url host ${host} could not be looked up in time; try again`, {
      cause,
    });
  });
  const refused = addresses.flatMap((address) => {
    const verdict = checkAddress(address, policy);
    return verdict.allowed ? [] : [verdict.reason];
  });
  if (refused.length > 0) {
    // Never the address, nor that the name exists (above): the development hint only for a name of
    // the machine's own (loopback), which every machine has.
    const own = refused.every((reason) => reason.replace(/^ipv4Mapped:/, '') === 'loopback');
    throw new SenderError('unsafe_url', `${notPublic}${own ? hintFor(refused) : ''}`);
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
