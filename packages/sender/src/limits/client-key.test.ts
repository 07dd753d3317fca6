import ipaddr from 'ipaddr.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clientKey } from './client-key.js';

describe('clientKey', () => {
  it('counts an IPv6 client by its /64, whatever address of it it uses, in any spelling', () => {
    const key = clientKey('2001:db8:1:2::1');
    expect(key).toBe('2001:db8:1:2::/64');
    for (const other of [
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:0db8:0001:0002:0:0:0:9',
      '2001:DB8:1:2::abcd',
    ])
      expect(clientKey(other)).toBe(key);
    expect(clientKey('2001:db8:1:3::1')).not.toBe(key);
  });

  it('counts an IPv4 client by its address, mapped into IPv6 or not', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('203.0.113.8')).not.toBe(clientKey('203.0.113.7'));
  });

  it('keeps what is not an address as it is', () => {
    expect(clientKey('unknown')).toBe('unknown');
  });
});

describe('clientKey, asked again', () => {
  it('answers the same key for an address asked many times, among more addresses than it remembers', () => {
    // 3,000 addresses, more than the 1,024 remembered: each is keyed by what it is, asked
    // before, after and long after the memory was emptied.
    const addresses = Array.from(
      { length: 3_000 },
      (_, i) => `2001:db8:${(i + 1).toString(16)}::${(i % 7) + 1}`,
    );
    const first = addresses.map(clientKey);
    expect(first).toEqual(addresses.map((_, i) => `2001:db8:${(i + 1).toString(16)}::/64`));
    expect(addresses.map(clientKey)).toEqual(first);
    expect([...addresses].reverse().map(clientKey)).toEqual([...first].reverse());
  });
});

describe('clientKey, remembered', () => {
  afterEach(() => vi.restoreAllMocks());

  it('parses an address once while it is remembered, a long string every time, and forgets all when full', () => {
    const parse = vi.spyOn(ipaddr, 'process');
    const address = '198.51.100.77';
    clientKey(address);
    clientKey(address);
    expect(parse).toHaveBeenCalledTimes(1);
    const long = 'x'.repeat(46);
    clientKey(long);
    clientKey(long);
    expect(parse).toHaveBeenCalledTimes(3);
    // 1,024 other addresses fill the memory and empty it: the first is parsed again.
    for (let i = 0; i < 1_024; i++) clientKey(`10.${i >> 8}.${i & 255}.9`);
    parse.mockClear();
    clientKey(address);
    expect(parse).toHaveBeenCalledTimes(1);
  });
});
