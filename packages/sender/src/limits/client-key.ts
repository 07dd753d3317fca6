/**
 * What the failed sign-in limit counts against (design D26): an IPv4 client's address, an IPv6
 * client's /64. A /64 is one network, the least an ISP or a cloud hands out, and a client picks any
 * of its addresses: counted by address, each failure could come from a new one.
 */
import ipaddr from 'ipaddr.js';

/**
 * Keys of the addresses seen lately: every request that presents credentials asks, mostly from a
 * few addresses (the platform's ingest clients), and parsing one was a seventieth of single-event
 * ingest's time (design D64). Emptied when full; only what could be an address (at most 45
 * characters, an IPv4-mapped IPv6 one written out) is kept, so the memory stays small.
 */
const known = new Map<string, string>();
const KNOWN_MAX = 1_024;
const ADDRESS_MAX_CHARS = 45;

export function clientKey(address: string): string {
  if (address.length > ADDRESS_MAX_CHARS) return keyOf(address);
  let key = known.get(address);
  if (key === undefined) {
    if (known.size >= KNOWN_MAX) known.clear();
    key = keyOf(address);
    known.set(address, key);
  }
  return key;
}

function keyOf(address: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address); // an IPv4-mapped IPv6 address is its IPv4 address
  } catch {
    return address; // not an address
  }
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}
