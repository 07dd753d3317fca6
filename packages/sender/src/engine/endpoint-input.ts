/** An endpoint's URL and events as a customer sends them, checked before anything is stored. */
import { EVENT_NAMES, type EventName, isEventName } from '@linkhooks/protocol';
import {
  type AddressPolicy,
  checkAddress,
  checkUrl,
  type LookupFunction,
  notOnPublicInternet,
  privateNetworkHint,
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
    throw new SenderError('unsafe_url', `url is not allowed: ${checked.reason}${privateNetworkHint(ranges)}`);
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
  // A name that does not exist and one that leads into a private network in the same words and
  // the same code, which is in the answer's body (notOnPublicInternet).
  const addresses = await dnsLookup(host, resolve).catch((cause: NodeJS.ErrnoException) => {
    if (cause?.code !== 'ETIMEOUT') {
      throw new SenderError('unsafe_url', `url host ${notOnPublicInternet(host)}`, { cause });
    }
    throw new SenderError('invalid_endpoint', `url host ${host} could not be looked up in time; try again`, {
      cause,
    });
  });
  const refused = addresses.flatMap((address) => {
    const verdict = checkAddress(address, policy);
    return verdict.allowed ? [] : [verdict.reason];
  });
  if (refused.length > 0)
    throw new SenderError('unsafe_url', `url host ${notOnPublicInternet(host, refused)}`);
  return checked.url.toString();
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
