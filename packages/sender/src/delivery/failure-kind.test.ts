import { describe, expect, it } from 'vitest';
import { BlockedAddressError, notOnPublicInternet } from './address-guard.js';
import { attemptFailure, describeError, withoutAddresses } from './failure-kind.js';

describe('withoutAddresses', () => {
  it.each([
    ['connect ECONNREFUSED 10.1.2.3:443', 'connect ECONNREFUSED an address:443'],
    ['connect ECONNREFUSED ::1:443', 'connect ECONNREFUSED an address'],
    ['connect ETIMEDOUT 2606:4700::1111:443', 'connect ETIMEDOUT an address'],
    ['connect EHOSTUNREACH 2001:db8:0:0:0:0:0:1', 'connect EHOSTUNREACH an address'],
  ])('hides the address in %s', (text, shown) => {
    expect(withoutAddresses(text)).toBe(shown);
  });

  it.each([
    'UND_ERR_HEADERS_TIMEOUT: Headers Timeout Error',
    'at 12:30:45',
    'getaddrinfo ENOTFOUND hooks.example.com',
  ])('leaves %s as it is', (text) => {
    expect(withoutAddresses(text)).toBe(text);
  });

  it('applies to the whole cause chain describeError writes to the log', () => {
    const error = new Error('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED 192.168.1.20:8443'), { code: 'ECONNREFUSED' }),
    });
    expect(describeError(error)).toBe('fetch failed ← ECONNREFUSED: connect ECONNREFUSED an address:8443');
  });
});

describe('attemptFailure', () => {
  const wrapped = (cause: Error) => new Error('fetch failed', { cause });

  it('words a refused address and a name that does not exist alike, untimed, and keeps why the first was refused', () => {
    const refused = wrapped(
      new BlockedAddressError({ hostname: 'db.internal', address: '10.0.0.5', reason: 'private' }),
    );
    const missing = wrapped(
      Object.assign(new Error('getaddrinfo ENOTFOUND db.internal'), { code: 'ENOTFOUND' }),
    );
    const words = notOnPublicInternet('db.internal');
    expect(attemptFailure(refused, 'db.internal')).toEqual({
      kind: 'dns',
      message: words,
      noPublicAddress: true,
      refused: 'private',
    });
    expect(attemptFailure(missing, 'db.internal')).toEqual({
      kind: 'dns',
      message: words,
      noPublicAddress: true,
    });
  });

  it('describes any other failure, timed as it happened', () => {
    const error = wrapped(
      Object.assign(new Error('connect ECONNREFUSED 203.0.113.9:443'), { code: 'ECONNREFUSED' }),
    );
    expect(attemptFailure(error, 'hooks.example.com')).toEqual({
      kind: 'connect',
      message: 'fetch failed ← ECONNREFUSED: connect ECONNREFUSED an address:443',
    });
  });
});
